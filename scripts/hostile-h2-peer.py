#!/usr/bin/env python3
"""An HTTP/2-over-TLS peer that answers an APNs client's first connection with hostile frames.

usage: hostile-h2-peer.py --cert PEM --key PEM MODE

Listens on 127.0.0.1 (a free port), prints "127.0.0.1:<port>" once listening, and serves until killed. The first
connection misbehaves as MODE says; every later one answers each request with 200 and an apns-id, so a client that
recovers shows it. Frames are written by hand (RFC 9113), not by an HTTP/2 library, so they can break its rules.

MODE
  huge-header-value     :status 200, then one header whose value is 1 MiB, in CONTINUATION frames
  many-headers          :status 200, then 200 000 small headers (about 5 MB) in CONTINUATION frames
  endless-continuation  HEADERS without END_HEADERS, then CONTINUATION frames without end
  huge-body             :status 400, then 8 MiB of DATA
  rst-storm             every request reset with INTERNAL_ERROR, each reset sent 1000 times
  zero-streams          SETTINGS_MAX_CONCURRENT_STREAMS = 0; never answers
  ping-flood            100 000 PING frames at once, then ordinary answers
  silent                the TLS handshake, then nothing (no SETTINGS)
  garbage               the TLS handshake, then bytes that are not HTTP/2 frames
"""

import argparse
import os
import socket
import ssl
import struct
import sys
import threading
import uuid

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, CONTINUATION = 0x0, 0x1, 0x3, 0x4, 0x6, 0x9
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
MODES = ["huge-header-value", "many-headers", "endless-continuation", "huge-body", "rst-storm", "zero-streams",
         "ping-flood", "silent", "garbage"]


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def hpack_integer(value, prefix_bits, first_byte=0):
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first_byte | value])
    out = [first_byte | limit]
    value -= limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def literal(name, value):
    """A literal header field without indexing, new name, no Huffman coding."""
    return b"\x00" + hpack_integer(len(name), 7) + name + hpack_integer(len(value), 7) + value


STATUS_200, STATUS_400 = b"\x88", b"\x8c"


def continuation_frames(stream, block, chunk=16384):
    """`block` split into CONTINUATION frames, END_HEADERS on the last."""
    pieces = [block[i:i + chunk] for i in range(0, len(block), chunk)] or [b""]
    return b"".join(frame(CONTINUATION, END_HEADERS if i == len(pieces) - 1 else 0, stream, piece)
                    for i, piece in enumerate(pieces))


class Connection:
    def __init__(self, sock, mode):
        self.sock = sock
        self.mode = mode
        self.buffer = b""

    def read_exactly(self, count):
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def frames(self):
        """The client's frames after its preface: (type, flags, stream id, payload)."""
        if self.read_exactly(len(PREFACE)) != PREFACE:
            raise EOFError
        while True:
            header = self.read_exactly(9)
            length = int.from_bytes(header[:3], "big")
            stream = int.from_bytes(header[5:9], "big") & 0x7FFFFFFF
            yield header[3], header[4], stream, self.read_exactly(length)

    def send(self, data):
        self.sock.sendall(data)

    def serve(self):
        mode = self.mode
        if mode == "silent":
            while self.sock.recv(65536):
                pass
            return
        if mode == "garbage":
            self.send(b"HTTP/1.1 200 OK\r\n\r\n" + os.urandom(4096))
            while self.sock.recv(65536):
                pass
            return
        settings = struct.pack(">HI", 0x3, 0) if mode == "zero-streams" else b""
        self.send(frame(SETTINGS, 0, 0, settings))
        if mode == "ping-flood":
            self.send(b"".join(frame(PING, 0, 0, struct.pack(">Q", n)) for n in range(100_000)))
        for kind, flags, stream, payload in self.frames():
            if kind == SETTINGS and not flags & ACK:
                self.send(frame(SETTINGS, ACK, 0))
            elif kind == PING and not flags & ACK:
                self.send(frame(PING, ACK, 0, payload))
            elif kind in (HEADERS, DATA) and flags & END_STREAM:
                self.answer(stream)

    def answer(self, stream):
        mode = self.mode
        if mode == "huge-header-value":
            block = literal(b"x-filler", b"v" * (1 << 20))
            self.send(frame(HEADERS, 0, stream, STATUS_200) + continuation_frames(stream, block)
                      + frame(DATA, END_STREAM, stream))
        elif mode == "many-headers":
            block = b"".join(literal(b"x-h%d" % n, b"value-%d" % n) for n in range(200_000))
            self.send(frame(HEADERS, 0, stream, STATUS_200) + continuation_frames(stream, block)
                      + frame(DATA, END_STREAM, stream))
        elif mode == "endless-continuation":
            self.send(frame(HEADERS, 0, stream, STATUS_200))
            piece = frame(CONTINUATION, 0, stream, literal(b"x-more", b"more"))
            while True:
                self.send(piece * 1000)
        elif mode == "huge-body":
            body = b"{" + b" " * (8 << 20) + b"}"
            chunks = [body[i:i + 16384] for i in range(0, len(body), 16384)]
            self.send(frame(HEADERS, END_HEADERS, stream, STATUS_400) + b"".join(
                frame(DATA, END_STREAM if i == len(chunks) - 1 else 0, stream, chunk) for i, chunk in enumerate(chunks)))
        elif mode == "rst-storm":
            self.send(frame(RST_STREAM, 0, stream, struct.pack(">I", 0x2)) * 1000)
        elif mode == "zero-streams":
            pass
        else:
            answer_well(self, stream)


def answer_well(connection, stream):
    block = STATUS_200 + literal(b"apns-id", str(uuid.uuid4()).upper().encode())
    connection.send(frame(HEADERS, END_HEADERS | END_STREAM, stream, block))


class WellBehaved(Connection):
    def answer(self, stream):
        answer_well(self, stream)


def handle(raw, context, mode):
    try:
        with context.wrap_socket(raw, server_side=True) as sock:
            (Connection(sock, mode) if mode else WellBehaved(sock, "")).serve()
    except (EOFError, OSError, ssl.SSLError):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("mode", choices=MODES)
    arguments = parser.parse_args()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(arguments.cert, arguments.key)
    context.set_alpn_protocols(["h2"])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print("127.0.0.1:%d" % listener.getsockname()[1], flush=True)
    first = True
    while True:
        raw, _ = listener.accept()
        mode, first = (arguments.mode if first else ""), False
        threading.Thread(target=handle, args=(raw, context, mode), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
