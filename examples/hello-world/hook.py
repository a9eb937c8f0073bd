#!/usr/bin/env python3
"""The hello-world sync hook: one ConfigMap <parent>-greeting per Hello.

Usage: python3 hook.py [PORT]   (default 8080; listens on 127.0.0.1 only)

The engine POSTs {controller, parent, children, related, finalizing} to /sync and expects the desired state back:
{status, children}. Returning the full child every time is all it takes: the engine creates, updates (InPlace) or
deletes children to match, and the owner references it sets make the garbage collector delete the ConfigMap
together with its Hello.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def sync(parent, children):
    who = parent.get("spec", {}).get("who", "World")
    greeting = f"Hello, {who}!"
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": parent["metadata"]["name"] + "-greeting"},
        "data": {"greeting": greeting},
    }
    # Status describes what the engine showed us (observed state), not what we ask for.
    status = {"greeting": greeting, "observedChildren": len(children.get("ConfigMap.v1", {}))}
    return {"status": status, "children": [configmap]}


class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path != "/sync":
            self.reply(404, "text/plain", f"no hook at {self.path}".encode())
            return
        try:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            body = json.dumps(sync(request["parent"], request.get("children", {}))).encode()
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            # The engine puts the body of a failed call into the SyncError event on the parent: plain text reads best.
            self.reply(500, "text/plain", f"cannot sync: {e!r}".encode())
            return
        self.reply(200, "application/json", body)

    def reply(self, code, content_type, body):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        # One line per call on stderr, without the client address (always the local engine).
        sys.stderr.write("hook.py: " + (fmt % args) + "\n")


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8080
    server = ThreadingHTTPServer(("127.0.0.1", port), Hook)
    print(f"hook.py: serving http://127.0.0.1:{port}/sync", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
