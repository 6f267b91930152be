#!/usr/bin/env python3
"""A tiny HTTP server on 127.0.0.1 that answers from a script, for FolderSync's WebDAV retry tests.

Usage: server.py '<json list of answers>'
Each answer is {"status": 503, "headers": {"Retry-After": "7"}, "body": "text"} or {"hang": true}
(accept the request and never answer). An answer may also say "delay": seconds (wait, then answer), or
"zeros": N (a body of N zero bytes, streamed; with "announce": false no Content-Length is sent and the
connection closes after the body), and then logs "SENT <bytes written before the client stopped reading>".
Answers are given in order, whatever the request; the last one repeats. Prints the port on the first
line of stdout; logs "METHOD PATH BODY-LENGTH" per request on stderr. Stops when its standard input closes, or by itself after 10 minutes (a safety net: a loaded
machine can keep a test from reaching its first request for minutes).
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

answers = json.loads(sys.argv[1])
lock = threading.Lock()
served = 0
# Bodies being streamed ("zeros"): the server waits for them to end before it stops, so their SENT line is logged.
streaming = threading.Semaphore(64)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self):
        global served
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        with lock:
            answer = answers[min(served, len(answers) - 1)]
            served += 1
        sys.stderr.write(f"{self.command} {self.path} {len(body)}\n")
        sys.stderr.flush()
        if answer.get("hang"):
            time.sleep(30)
            return
        if answer.get("delay"):
            time.sleep(answer["delay"])
        self.send_response(answer["status"])
        for name, value in answer.get("headers", {}).items():
            self.send_header(name, value)
        if "zeros" in answer:
            self.send_zeros(answer["zeros"], answer.get("announce", True))
            return
        data = answer.get("body", "").encode()
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_zeros(self, size, announce):
        streaming.acquire()
        try:
            self.stream_zeros(size, announce)
        finally:
            streaming.release()

    def stream_zeros(self, size, announce):
        if announce:
            self.send_header("Content-Length", str(size))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        chunk = bytes(64 * 1024)
        sent = 0
        try:
            while sent < size:
                piece = chunk[:min(len(chunk), size - sent)]
                self.wfile.write(piece)
                sent += len(piece)
            self.wfile.flush()
        except OSError:
            pass
        sys.stderr.write(f"SENT {sent}\n")
        sys.stderr.flush()

    def log_message(self, *args):
        pass


for method in ["GET", "HEAD", "PUT", "DELETE", "MOVE", "COPY", "MKCOL", "PROPFIND", "OPTIONS", "POST"]:
    setattr(Handler, "do_" + method, Handler.answer)

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
stop.wait(600)
for _ in range(64):
    streaming.acquire(timeout=10)
