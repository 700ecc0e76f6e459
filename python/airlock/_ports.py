"""Published ports of a sandbox (docs/forwarding.md): host listeners whose
connections reach a guest TCP port over vsock."""
from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

if TYPE_CHECKING:
    from ._sandbox import Sandbox


class Ports:
    def __init__(self, sandbox: "Sandbox") -> None:
        self._sb = sandbox

    def expose(self, guest_port: int, host_port: int = 0, host_ip: Optional[str] = None) -> str:
        """Publishes guest_port (a server on 127.0.0.1 in the sandbox) and
        returns the host address that reaches it, "127.0.0.1:PORT" (host_port
        0: any free one; host_ip 127.0.0.1 unless given)."""
        body: dict = {"guest_port": guest_port, "host_port": host_port}
        if host_ip is not None:
            body["host_ip"] = host_ip
        got = self._sb._client.json("POST", f"/v1/sandboxes/{self._sb.id}/ports", body, want=201)
        return got["address"]

    def list(self) -> List[dict]:
        return self._sb._client.json("GET", f"/v1/sandboxes/{self._sb.id}/ports")["ports"]

    def close(self, guest_port: int) -> None:
        """Ends the port's listener and its connections."""
        self._sb._client.request("DELETE", f"/v1/sandboxes/{self._sb.id}/ports/{guest_port}",
                                want=204).read()
