"""kronii.edge: where a service meets its callers: access, the error answers, input limits, OpenAPI, the local socket door, sign-in and proof of presence."""
