from a2a_platform_worker.worker import IDLE_HEARTBEAT_TICKS, HeartbeatCadence


def sent(cadence: HeartbeatCadence, leases: list[bool]) -> list[int]:
    """The ticks, counted from 1, on which ``cadence`` sends a heartbeat."""
    return [i + 1 for i, holds in enumerate(leases) if cadence.due(holds)]


def test_every_tick_while_a_lease_is_held() -> None:
    assert sent(HeartbeatCadence(), [True] * 7) == [1, 2, 3, 4, 5, 6, 7]


def test_every_fifth_tick_while_none_is() -> None:
    assert IDLE_HEARTBEAT_TICKS == 5
    assert sent(HeartbeatCadence(), [False] * 12) == [5, 10]


def test_quiet_ticks_count_from_the_last_heartbeat() -> None:
    leases = [False, False, True, False, False, False, False, False, False]
    assert sent(HeartbeatCadence(), leases) == [3, 8]


def test_at_once_sends_and_counts_from_there() -> None:
    cadence = HeartbeatCadence()
    assert not cadence.due(False)
    assert cadence.due(False, at_once=True)
    assert sent(cadence, [False] * 5) == [5]
