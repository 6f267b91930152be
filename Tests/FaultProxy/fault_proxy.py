#!/usr/bin/env python3
"""A real WebDAV server (wsgidav, a child process) behind a proxy on 127.0.0.1 that injects faults,
for FolderSync's fault tests.

Usage: fault_proxy.py --root DIR [--seed N] [--hold SUBSTRING]

- With --seed, after the command "storm", each request draws (from a generator seeded with N) one of: forward it; answer 503 with
  Retry-After: 1 without forwarding; drop the connection before forwarding; forward it and drop the
  connection instead of answering (the request was carried out, the client does not know); delay the
  answer; for a PUT, forward half of its body and drop both connections (a torn upload).
- With --hold, the first PUT whose path contains SUBSTRING is forwarded half, then held: the proxy
  prints "midupload PATH" and waits for the command "continue" before finishing it (which fails if
  the server was killed meanwhile, dropping the client's connection).

Prints "port N" (the proxy's) once the server answers. Commands on standard input, one per line:
"kill" (SIGKILL the server; prints "killed"), "restart" (start it again on the same port and folder;
prints "ready"), "down" (the proxy stops listening: connections are refused, as by a stopped server; prints
"down"), "up" (it listens again on the same port; prints "up"), "continue", "storm" (faults on, with --seed;
prints "storm"), "calm" (faults off; prints "calm"). Logs "KIND METHOD PATH" per request
on standard error. Stops the server and exits when standard input closes.
"""
import argparse
import http.client
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--root", required=True)
parser.add_argument("--seed", type=int)
parser.add_argument("--hold")
options = parser.parse_args()

lock = threading.Lock()
random_source = random.Random(options.seed)
faulty = False
held = threading.Event()
resume = threading.Event()
out_lock = threading.Lock()


def say(line):
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


upstream_port = free_port()
config = os.path.join(options.root, "..", "wsgidav-%d.yaml" % upstream_port)
with open(config, "w") as f:
    f.write(f"""host: 127.0.0.1
port: {upstream_port}
server: cheroot
provider_mapping:
  "/": "{os.path.abspath(options.root)}"
http_authenticator:
  accept_basic: true
  accept_digest: false
  default_to_digest: false
simple_dc:
  user_mapping:
    "*": true
verbose: 0
logging:
  enable_loggers: []
""")
server_process = None


def start_server():
    global server_process
    server_process = subprocess.Popen([sys.executable, "-m", "wsgidav.server.server_cli", "--config", config],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=2)
            connection.request("OPTIONS", "/")
            connection.getresponse().read()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("wsgidav did not start")


def draw(method):
    if not faulty:
        return "forward"
    with lock:
        roll = random_source.random()
    kinds = [(0.10, "503"), (0.18, "drop-before"), (0.26, "drop-after"), (0.34, "delay")]
    if method == "PUT":
        kinds.append((0.50, "torn-upload"))
    for limit, kind in kinds:
        if roll < limit:
            return kind
    return "forward"


HOP_BY_HOP = {"host", "connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection", "te", "upgrade"}


open_connections = set()


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        with lock:
            open_connections.add(self.connection)

    def finish(self):
        with lock:
            open_connections.discard(self.connection)
        super().finish()

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP_BY_HOP}
        if "Destination" in headers:
            headers["Destination"] = headers["Destination"].replace(
                "127.0.0.1:%d" % self.server.server_address[1], "127.0.0.1:%d" % upstream_port)
        kind = draw(self.command)
        if options.hold and self.command == "PUT" and options.hold in self.path and not held.is_set():
            held.set()
            kind = "held-upload"
        sys.stderr.write(f"{kind} {self.command} {self.path}\n")
        sys.stderr.flush()
        if kind == "503":
            return self.reply(503, {"Retry-After": "1"}, b"busy")
        if kind == "drop-before":
            self.close_connection = True
            return
        if kind in ("torn-upload", "held-upload"):
            upstream = socket.create_connection(("127.0.0.1", upstream_port))
            head = f"PUT {self.path} HTTP/1.1\r\nHost: 127.0.0.1:{upstream_port}\r\nContent-Length: {len(body)}\r\n"
            head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
            upstream.sendall((head + "\r\n").encode() + body[: len(body) // 2])
            if kind == "held-upload":
                say("midupload " + self.path)
                resume.wait()
                try:
                    upstream.sendall(body[len(body) // 2:])
                    upstream.recv(1)
                except OSError:
                    pass
            upstream.close()
            self.close_connection = True
            return
        try:
            connection = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
            connection.request(self.command, self.path, body=body if body or length else None, headers=headers)
            response = connection.getresponse()
            data = response.read()
            answer_headers = {name: value for name, value in response.getheaders() if name.lower() not in HOP_BY_HOP}
            connection.close()
        except OSError:
            self.close_connection = True
            return
        if kind == "drop-after":
            self.close_connection = True
            return
        if kind == "delay":
            with lock:
                pause = random_source.uniform(0.1, 0.5)
            time.sleep(pause)
        self.reply(response.status, answer_headers, data)

    def reply(self, status, headers, data):
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def log_message(self, *args):
        pass


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client gone mid-answer (a dropped or timed-out request) is expected here


for method in ["GET", "HEAD", "PUT", "DELETE", "MOVE", "COPY", "MKCOL", "PROPFIND", "PROPPATCH", "OPTIONS", "LOCK", "UNLOCK"]:
    setattr(Proxy, "do_" + method, Proxy.handle_any)

def listen(port):
    server = QuietServer(("127.0.0.1", port), Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


start_server()
proxy = listen(0)
proxy_port = proxy.server_address[1]
say("port %d" % proxy_port)

for line in sys.stdin:
    command = line.strip()
    if command == "kill":
        server_process.send_signal(signal.SIGKILL)
        server_process.wait()
        say("killed")
    elif command == "restart":
        start_server()
        say("ready")
    elif command == "down":
        proxy.shutdown()
        proxy.server_close()
        with lock:
            for connection in list(open_connections):  # a stopped server's kept-alive connections end too
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        say("down")
    elif command == "up":
        proxy = listen(proxy_port)
        say("up")
    elif command == "continue":
        resume.set()
    elif command == "storm":
        faulty = options.seed is not None
        say("storm")
    elif command == "calm":
        faulty = False
        say("calm")
server_process.send_signal(signal.SIGKILL)
server_process.wait()
