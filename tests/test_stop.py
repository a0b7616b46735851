"""SIGTERM ends a command the way Ctrl-C does (bunzai_codecs.core.stop): a scheduler's timeout or
``kill`` must not leave staged files behind or a traceback, and says so with exit code 143."""

from __future__ import annotations

import signal
import threading

import pytest

from bunzai_codecs.core.stop import (
    Terminated,
    interrupt_of,
    interrupted_exit,
    terminate_as_interrupt,
)
from bunzai_codecs.exitcodes import Exit


def test_sigterm_inside_the_block_raises_terminated_and_the_old_handler_comes_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated), terminate_as_interrupt():
        signal.raise_signal(signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_second_sigterm_does_not_cut_the_clean_up_short() -> None:
    cleaned = []
    with pytest.raises(Terminated), terminate_as_interrupt():
        try:
            signal.raise_signal(signal.SIGTERM)
        finally:
            signal.raise_signal(signal.SIGTERM)  # ignored: the clean-up below still runs
            cleaned.append(True)
    assert cleaned == [True]


def test_terminated_is_an_interrupt_with_its_own_exit_code() -> None:
    assert issubclass(Terminated, KeyboardInterrupt)
    assert (Exit.TERMINATED, Exit.INTERRUPTED) == (143, 130)
    assert interrupted_exit(Terminated()) == 143
    assert interrupted_exit(KeyboardInterrupt()) == 130


def test_the_interrupt_behind_a_runners_wrapper_is_found() -> None:
    stop = Terminated()
    try:
        try:
            raise stop
        except Terminated as exc:
            raise RuntimeError("Terminated [while running 'Read']") from exc
    except RuntimeError as wrapped:
        assert interrupt_of(wrapped) is stop
    plain = ValueError("no interrupt here")
    assert interrupt_of(plain) is None
    a, b = RuntimeError("a"), RuntimeError("b")
    a.__context__, b.__context__ = b, a  # a cycle ends the walk
    assert interrupt_of(a) is None


def test_off_the_main_thread_it_changes_nothing() -> None:
    before = signal.getsignal(signal.SIGTERM)
    seen = []

    def worker() -> None:
        with terminate_as_interrupt():
            seen.append(signal.getsignal(signal.SIGTERM))

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == [before]
