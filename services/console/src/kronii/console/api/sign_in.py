"""The sign-in routes: POST /console/link (only `kronii console` can ask: see api/security.py), GET /login
(the one-time link: sets the session cookie and goes to Today, or 403 with the reason), POST /logout,
and / (Today)."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from kronii.console.api.rendering import render
from kronii.console.api.security import COOKIE, person
from kronii.console.usecases.sign_in import LinkRefused, SignIn

__all__ = ["sign_in_router"]


def sign_in_router(sign_in: Callable[[], SignIn]) -> APIRouter:
    router = APIRouter(tags=["console"])

    @router.post("/console/link")
    async def console_link(request: Request) -> JSONResponse:
        """A fresh one-time login link for `kronii console` (a web page cannot ask: see security.py)."""
        issued = await sign_in().issue_link(person(request))
        host = request.headers.get("host", "127.0.0.1")
        return JSONResponse(
            {"url": f"http://{host}/login?token={issued.token}", "expires_in_secs": issued.expires_in_secs}
        )

    @router.get("/login")
    async def login(request: Request, token: str = "") -> Response:
        try:
            session = await sign_in().open_session(token, person(request))
        except LinkRefused as refused:
            return render(
                request,
                "refused.html",
                {"heading": "Login link refused", "reason": refused.message, "hint": ""},
                status_code=403,
            )
        answer = RedirectResponse("/today", status_code=303)
        answer.set_cookie(
            COOKIE, session.session_id, httponly=True, samesite="strict", path="/", secure=False,
            max_age=None,
        )  # fmt: skip
        return answer

    @router.post("/logout")
    async def logout(request: Request) -> Response:
        session = getattr(request.state, "console_session", None)
        if session is not None:
            await sign_in().end(session, person(request))
        answer = RedirectResponse("/today", status_code=303)  # the 401 page: signed out
        answer.delete_cookie(COOKIE, path="/")
        return answer

    @router.get("/")
    async def home() -> RedirectResponse:
        return RedirectResponse("/today", status_code=303)

    return router
