from a2a_platform_worker import Backoff


def test_doubles_from_the_initial_delay_up_to_the_cap() -> None:
    backoff = Backoff()
    assert [backoff.delay(attempt, lambda: 0.5) for attempt in range(5)] == [
        0.1,
        0.2,
        0.4,
        0.8,
        1.0,
    ]
    assert backoff.delay(50, lambda: 0.5) == 1.0


def test_jitter_spreads_the_delay_both_ways() -> None:
    backoff = Backoff(initial=1.0, maximum=10.0, jitter=0.2)
    assert backoff.delay(0, lambda: 0.0) == 0.8
    assert abs(backoff.delay(0, lambda: 0.999999) - 1.2) < 1e-5


def test_a_negative_attempt_counts_as_the_first() -> None:
    assert Backoff().delay(-3, lambda: 0.5) == 0.1
