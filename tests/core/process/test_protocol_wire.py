"""The worker protocol's wire against a broken or hostile child: garbage frames, oversized
frames, truncated request files, huge captured output, odd exit codes, closed streams."""

from __future__ import annotations

import io
import signal
import struct
from pathlib import Path

import pytest

from specpack._core._process.protocol import (
    MAX_FRAME,
    FrameReader,
    Outcome,
    ProtocolError,
    exit_text,
    new_key,
    pack_frame,
    read_capture,
    read_request,
    write_request,
)
from specpack._core._process.protocol import replay as replay_outcomes

HEADER = struct.Struct(">Q")


def frame(body: bytes) -> bytes:
    return HEADER.pack(len(body)) + body


def test_frames_are_reassembled_from_any_chunking() -> None:
    data = pack_frame({"task": 1, "status": "ok", "value": (1, 2.5, b"x")}) + pack_frame({"n": 2})
    reader = FrameReader("worker 1")
    got = []
    for i in range(len(data)):
        reader.feed(data[i:i + 1])
        message = reader.next()
        if message is not None:
            got.append(message)
    assert got == [{"task": 1, "status": "ok", "value": (1, 2.5, b"x")}, {"n": 2}]
    assert reader.next() is None


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b"\xff\xfe not utf-8", "unreadable message from worker 1: UnicodeDecodeError"),
        (b"{not json", "unreadable message from worker 1: JSONDecodeError"),
        (b"[1, 2]", "unreadable message from worker 1: not a JSON object"),
        (b'{"$nope": 1}', "unreadable message from worker 1: "),
    ],
)
def test_a_frame_that_is_no_typed_json_object_is_a_protocol_error(body: bytes,
                                                                   needle: str) -> None:
    reader = FrameReader("worker 1")
    reader.feed(frame(body))
    with pytest.raises(ProtocolError) as info:
        reader.next()
    assert str(info.value).startswith(needle)
    assert info.value.__cause__ is None  # the decoder's traceback is not chained


def test_a_keyed_reader_takes_frames_tagged_with_its_key_from_any_chunking() -> None:
    key = new_key()
    data = pack_frame({"task": 1, "status": "ok", "value": -0.0}, key) + pack_frame({"n": 2}, key)
    reader = FrameReader("worker 3", key)
    got = []
    for i in range(0, len(data), 7):
        reader.feed(data[i:i + 7])
        while (message := reader.next()) is not None:
            got.append(message)
    assert got == [{"task": 1, "status": "ok", "value": -0.0}, {"n": 2}]


@pytest.mark.parametrize("forged", ["unkeyed", "another key", "a changed byte", "truncated tag"])
def test_a_keyed_reader_refuses_a_frame_without_its_key(forged: str) -> None:
    key = new_key()
    message = {"task": 1, "status": "ok", "value": "forged"}
    data = {
        "unkeyed": pack_frame(message),
        "another key": pack_frame(message, new_key()),
        "a changed byte": pack_frame({**message, "value": "forgeD"}, key).replace(b"forgeD",
                                                                                b"forged"),
        "truncated tag": frame(b"x" * 5),
    }[forged]
    reader = FrameReader("the fresh interpreter", key)
    reader.feed(data)
    with pytest.raises(ProtocolError) as info:
        reader.next()
    assert str(info.value).startswith("the fresh interpreter sent a frame without this worker's "
                                      "key: something other than specpack's harness")


def test_an_oversized_frame_is_refused_before_it_is_read() -> None:
    reader = FrameReader("worker 2")
    reader.feed(HEADER.pack(MAX_FRAME + 1))
    with pytest.raises(ProtocolError, match=f"worker 2 sent a frame of {MAX_FRAME + 1} bytes "
                       rf"\(the limit is {MAX_FRAME}\)"):
        reader.next()


def test_a_request_file_round_trips_and_a_truncated_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "req"
    write_request(str(path), {"job": "m:f", "params": {"steps": 3}}, b"\x00payload")
    assert read_request(str(path)) == ({"job": "m:f", "params": {"steps": 3}}, b"\x00payload")
    data = path.read_bytes()
    (tmp_path / "short").write_bytes(data[:5])
    with pytest.raises(ProtocolError, match=r"truncated request file .*short"):
        read_request(str(tmp_path / "short"))
    (tmp_path / "cut").write_bytes(data[:20])
    with pytest.raises(ProtocolError, match=r"truncated request file .*cut"):
        read_request(str(tmp_path / "cut"))


def test_captured_output_is_cut_in_the_middle_when_too_long(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_bytes(b"H" * 100 + b"M" * 1000 + b"T" * 100)
    text = read_capture(str(path), limit=400)
    head, cut, tail = text.split("\n")
    assert head == "H" * 100 and cut == "[... 800 bytes cut ...]"
    assert tail == "M" * 200 + "T" * 100
    assert read_capture(str(path)) == "H" * 100 + "M" * 1000 + "T" * 100
    assert read_capture(str(tmp_path / "missing")) == ""
    assert read_capture(None) == ""


def test_exit_text_names_codes_and_signals() -> None:
    assert exit_text(None) == "did not exit"
    assert exit_text(0) == "exited with code 0"
    assert exit_text(-signal.SIGKILL) == "was killed by signal SIGKILL"
    assert exit_text(-1000) == "was killed by signal signal 1000"


def test_replay_writes_what_children_printed_and_survives_a_closed_stream(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = Outcome("ok", None, "", "", "child out\n", "child err\n", 0.1)
    replay_outcomes([outcome])
    assert capsys.readouterr() == ("child out\n", "child err\n")
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr("sys.stdout", closed)
    replay_outcomes([outcome])  # no exception: nothing to show it on
    assert capsys.readouterr().err == "child err\n"
