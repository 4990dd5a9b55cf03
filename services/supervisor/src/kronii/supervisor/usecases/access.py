"""Who may call (section 15): verifying a caller's signed token and its scopes,
minting tokens (for the agents the supervisor starts), and the identity proof."""

from __future__ import annotations

from kronii.foundation.errors import PermissionDenied, Unauthenticated
from kronii.supervisor.core import identity
from kronii.supervisor.core.tokens import Claims, TokenError, issue_token, verify_token
from kronii.supervisor.ports import Clock
from kronii.supervisor.settings import SupervisorSettings

__all__ = ["Access", "need"]


def need(claims: Claims, scope: str, workspace_id: str | None = None, runtime_id: str = "") -> None:
    """The caller holds `scope` (or owns the runtime) and may target the workspace, or PermissionDenied."""
    if not (claims.has(scope) or (runtime_id and claims.owns_runtime(runtime_id))):
        raise PermissionDenied(f"the caller {claims.subject!r} lacks the {scope!r} scope")
    if workspace_id is not None and not claims.allows_workspace(workspace_id):
        raise PermissionDenied(f"the caller {claims.subject!r} may not target workspace {workspace_id!r}")


def _connect_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host  # noqa: S104 - compared, never bound


class Access:
    def __init__(self, secret: bytes, settings: SupervisorSettings, clock: Clock) -> None:
        self._secret = secret
        self._settings = settings
        self._clock = clock

    def authenticate(self, token: str | None) -> Claims:
        if not token:
            raise Unauthenticated("a signed service token is required (Authorization: Bearer ...)")
        try:
            return verify_token(self._secret, token, now=self._clock.wall())
        except TokenError as error:
            raise Unauthenticated(f"the service token was refused: {error}") from None

    def identity_proof(self, nonce: str) -> str:
        """GET /v1/identity: proof that this server holds the token secret and listens on its port
        (never the secret itself)."""
        return identity.identity_proof(self._secret, nonce, self._settings.http_port)

    def issue(self, subject: str, scopes: set[str], workspaces: set[str], ttl: float | None = None) -> str:
        return issue_token(
            self._secret,
            subject=subject,
            scopes=scopes,
            workspaces=workspaces,
            now=self._clock.wall(),
            ttl_secs=ttl or self._settings.token_ttl_secs,
        )

    def runtime_env(self, runtime_id: str, workspace_id: str) -> dict[str, str]:
        """What an agent started by the supervisor gets to acknowledge, heartbeat and use its threads
        (`kronii thread` reads the workspace from KRONII_WORKSPACE_ID)."""
        token = self.issue(f"runtime:{runtime_id}", {f"runtime:{runtime_id}"}, {workspace_id}, ttl=30 * 86400)
        return {
            "KRONII_RUNTIME_ID": runtime_id,
            "KRONII_WORKSPACE_ID": workspace_id,
            "KRONII_RUNTIME_TOKEN": token,
            "KRONII_SUPERVISOR_URL": f"http://{_connect_host(self._settings.host)}:{self._settings.http_port}",
        }
