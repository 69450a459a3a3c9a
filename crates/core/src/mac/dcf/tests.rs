//! Hand-driven DCF timing tests. Each drives one or two `Dcf` instances with
//! literal inputs and expects literal microseconds, from this timeline
//! (802.11b, 2 Mbit/s data, 1 Mbit/s control, long preamble):
//!
//! ```text
//!  A: |DIFS|--RTS 352--|            |--------- DATA 4416 ---------|          |
//!     0   50          402  SIFS    716 SIFS 726                5142 SIFS    5456
//!  B:                     |-CTS 304-|                               |-ACK 304-|
//!                        412        716                            5152     5456
//! ```

use super::harness::{fire, on_air, station_with, timer, transmitted, us};
use super::*;
use crate::mac::frame::RTS_BYTES;

const A: u32 = 0;
const B: u32 = 1;
const C: u32 = 2;

fn dcf(me: u32, seed: u64) -> Dcf {
    station_with(me, DcfConfig::default(), seed)
}

/// 1000 B payload + UDP 8 + IP 20: a 1056-byte data frame, 4416 µs at 2 Mbit/s.
pub(super) fn msdu() -> Msdu {
    Msdu {
        packet: 7,
        bytes: 1028,
        label: None,
        ff_run: 0,
    }
}

/// A's RTS to B of the timeline above, as a third station overhears it.
pub(super) fn rts_a_to_b() -> Frame {
    Frame {
        kind: FrameKind::Rts,
        tx: A,
        rx: B,
        duration: Duration::from_micros(5054),
        seq: 0,
        retry: false,
        msdu: None,
        bytes: RTS_BYTES,
        rate: Rate::MBPS_1,
        ext: Extensions::default(),
    }
}

#[test]
fn rts_cts_data_ack_exchange() {
    let (mut a, mut b) = (dcf(A, 1), dcf(B, 1));
    let mut out = Vec::new();
    a.handle_msdu(us(0), msdu(), B, &mut out);
    // Idle medium: no backoff, transmit after DIFS.
    let (t, o) = fire(&mut a, &out, MacTimer::Access);
    assert_eq!(t, us(50));
    let rts = on_air(&o).unwrap();
    assert_eq!(rts.kind, FrameKind::Rts);
    assert_eq!(rts.airtime(), Duration::from_micros(352));
    // NAV: 3 SIFS + CTS 304 + DATA 4416 + ACK 304.
    assert_eq!(rts.duration, Duration::from_micros(5054));

    let mut out = Vec::new();
    a.handle_medium_busy(us(50));
    a.handle_tx_end(us(402), &mut out);
    assert_eq!(timer(&out, MacTimer::Timeout).unwrap().0, us(736));

    let mut bo = Vec::new();
    b.handle_medium_busy(us(50));
    b.handle_rx(us(402), &rts, &mut bo);
    b.handle_medium_idle(us(402), &mut bo);
    let (t, o) = fire(&mut b, &bo, MacTimer::Response);
    assert_eq!(t, us(412));
    let cts = on_air(&o).unwrap();
    assert_eq!(
        (cts.kind, cts.rx, cts.duration),
        (FrameKind::Cts, A, Duration::from_micros(4740))
    );
    b.handle_tx_end(us(716), &mut Vec::new());

    let mut out = Vec::new();
    a.handle_rx(us(716), &cts, &mut out);
    let (t, o) = fire(&mut a, &out, MacTimer::Response);
    assert_eq!(t, us(726));
    let data = on_air(&o).unwrap();
    assert_eq!(
        (data.kind, data.duration, data.retry),
        (FrameKind::Data, Duration::from_micros(314), false)
    );
    let mut out = Vec::new();
    a.handle_tx_end(us(5142), &mut out);
    assert_eq!(timer(&out, MacTimer::Timeout).unwrap().0, us(5476));

    let mut bo = Vec::new();
    b.handle_rx(us(5142), &data, &mut bo);
    assert!(bo.contains(&MacAction::Deliver { msdu: msdu(), from: A }));
    let (t, o) = fire(&mut b, &bo, MacTimer::Response);
    assert_eq!(t, us(5152));
    let ack = on_air(&o).unwrap();
    assert_eq!(ack.kind, FrameKind::Ack);

    let mut out = Vec::new();
    a.handle_medium_busy(us(5152));
    a.handle_rx(us(5456), &ack, &mut out);
    assert!(out.contains(&MacAction::TxDone {
        msdu: msdu(),
        next_hop: B
    }));
    a.handle_medium_idle(us(5456), &mut out);
    // A backoff follows every transmission: DIFS plus the drawn slots.
    let slots = a.backoff_slots() as u64;
    assert!(slots <= 31);
    assert_eq!(timer(&out, MacTimer::Access).unwrap().0, us(5456 + 50 + 20 * slots));
    assert!(a.wants_msdu());
}

#[test]
fn defers_to_the_nav_of_an_overheard_rts() {
    let mut c = dcf(C, 3);
    let rts = rts_a_to_b();
    let mut out = Vec::new();
    c.handle_medium_busy(us(50));
    c.handle_rx(us(402), &rts, &mut out);
    c.handle_medium_idle(us(402), &mut out);
    assert_eq!(c.nav().end(), us(5456));
    // A frame that arrives while the NAV is set backs off after NAV + DIFS.
    let mut out = Vec::new();
    c.handle_msdu(us(500), msdu(), B, &mut out);
    let slots = c.backoff_slots() as u64;
    assert_eq!(timer(&out, MacTimer::Access).unwrap().0, us(5456 + 50 + 20 * slots));
    // It does not answer an RTS for itself while its NAV is set.
    let mut out = Vec::new();
    let rts_to_c = Frame { rx: C, tx: B, ..rts };
    c.handle_rx(us(1000), &rts_to_c, &mut out);
    assert!(timer(&out, MacTimer::Response).is_none());
    assert_eq!(c.nav().busy_time(us(5456)), Duration::from_micros(5054));
}

#[test]
fn a_frame_that_only_sets_the_nav_takes_the_short_path_to_the_same_state() {
    // C contends (an MSDU for B, backing off) and decodes other stations'
    // frames: through `handle_rx`, and through `rx_nav_only` where
    // `only_sets_nav` allows it. The actions (but for a data frame passed
    // up as overheard, when nothing reads those), the NAV and what C does
    // next (its access timer after the medium goes idle, the frame it
    // sends) are the same either way.
    let rts = rts_a_to_b();
    let cts = Frame {
        kind: FrameKind::Cts,
        tx: B,
        rx: A,
        duration: Duration::from_micros(4740),
        ..rts
    };
    // An ACK sets no NAV beyond itself: C's wait is then EIFS or DIFS.
    let ack = Frame {
        kind: FrameKind::Ack,
        tx: B,
        rx: A,
        duration: Duration::ZERO,
        ..rts
    };
    let data = Frame {
        kind: FrameKind::Data,
        rx: B,
        msdu: Some(msdu()),
        bytes: 1056,
        rate: Rate::MBPS_2,
        ..rts
    };
    for promiscuous in [true, false] {
        let cfg = DcfConfig {
            promiscuous,
            ..DcfConfig::default()
        };
        let c = station_with(C, cfg.clone(), 5);
        for f in [rts, cts, ack, data] {
            assert!(c.only_sets_nav(&f));
            let mut runs = Vec::new();
            for short in [false, true] {
                let mut c = station_with(C, cfg.clone(), 5);
                let mut out = Vec::new();
                c.handle_msdu(us(0), msdu(), B, &mut out);
                c.handle_medium_busy(us(20));
                c.handle_rx_error(us(300));
                let mut out = Vec::new();
                if short {
                    out.extend(c.rx_nav_only(us(402), &f).map(MacAction::from));
                } else {
                    c.handle_rx(us(402), &f, &mut out);
                    let up = out.iter().filter(|a| matches!(a, MacAction::Overheard(_))).count();
                    assert_eq!(up, usize::from(f == data && promiscuous));
                    out.retain(|a| !matches!(a, MacAction::Overheard(_)));
                }
                let nav = c.nav().end();
                c.handle_medium_idle(us(402), &mut out);
                let (t, sent) = fire(&mut c, &out, MacTimer::Access);
                runs.push((out, nav, t, on_air(&sent)));
            }
            assert_eq!(runs[0], runs[1], "{:?}", f.kind);
        }
    }
    // Frames that do more than set the NAV: for C, broadcast, or an
    // ACK-RTS whose RTS part is for C.
    let c = dcf(C, 5);
    assert!(!c.only_sets_nav(&Frame { rx: C, ..rts }));
    assert!(!c.only_sets_nav(&Frame { rx: BROADCAST, ..data }));
    let ack_rts = Frame {
        kind: FrameKind::Ack,
        ext: Extensions {
            rx2: Some(C),
            ..Extensions::default()
        },
        ..cts
    };
    assert!(!c.only_sets_nav(&ack_rts));
}

#[test]
fn overheard_data_is_reported_only_in_promiscuous_mode() {
    // A's DATA to B, overheard by C: the NAV is set either way, and the
    // frame goes up only when C's MAC is promiscuous (NRED reads it).
    let data = Frame {
        kind: FrameKind::Data,
        tx: A,
        rx: B,
        duration: Duration::from_micros(314),
        seq: 1,
        retry: false,
        msdu: Some(msdu()),
        bytes: 1056,
        rate: Rate::MBPS_2,
        ext: Extensions::default(),
    };
    for promiscuous in [true, false] {
        let mut c = station_with(
            C,
            DcfConfig {
                promiscuous,
                ..DcfConfig::default()
            },
            3,
        );
        let mut out = Vec::new();
        c.handle_medium_busy(us(726));
        c.handle_rx(us(5142), &data, &mut out);
        assert_eq!(c.nav().end(), us(5456));
        let up = out
            .iter()
            .filter(|a| matches!(a, MacAction::Overheard(f) if *f == data))
            .count();
        assert_eq!(up, usize::from(promiscuous), "promiscuous = {promiscuous}");
    }
}

#[test]
fn eifs_after_a_corrupted_frame() {
    let mut c = dcf(C, 4);
    let mut out = Vec::new();
    c.handle_medium_busy(us(0));
    c.handle_rx_error(us(300));
    c.handle_medium_idle(us(300), &mut out);
    c.handle_msdu(us(310), msdu(), B, &mut out);
    // EIFS = SIFS 10 + ACK 304 + DIFS 50 = 364 µs after the error.
    assert_eq!(timer(&out, MacTimer::Access).unwrap().0, us(664));
    // A correct frame afterwards restores DIFS.
    let ack = Frame {
        kind: FrameKind::Ack,
        tx: A,
        rx: B,
        duration: Duration::ZERO,
        seq: 0,
        retry: false,
        msdu: None,
        bytes: ACK_BYTES,
        rate: Rate::MBPS_1,
        ext: Extensions::default(),
    };
    let mut out = Vec::new();
    c.handle_medium_busy(us(400));
    c.handle_rx(us(704), &ack, &mut out);
    c.handle_medium_idle(us(704), &mut out);
    assert_eq!(timer(&out, MacTimer::Access).unwrap().0, us(754));
}

#[test]
fn backoff_freezes_while_busy_and_resumes() {
    // Find a seed whose first draw leaves at least three slots.
    let (mut m, k) = (1..100)
        .find_map(|seed| {
            let mut m = dcf(A, seed);
            m.handle_medium_busy(us(0));
            m.handle_msdu(us(0), msdu(), B, &mut Vec::new());
            let k = m.backoff_slots() as u64;
            (k >= 3).then_some((m, k))
        })
        .unwrap();
    let mut out = Vec::new();
    m.handle_medium_idle(us(100), &mut out);
    assert_eq!(timer(&out, MacTimer::Access).unwrap().0, us(100 + 50 + 20 * k));
    // Busy 2 slots and 5 µs into the countdown: two slots are used up.
    m.handle_medium_busy(us(100 + 50 + 45));
    assert_eq!(m.backoff_slots() as u64, k - 2);
    let mut out = Vec::new();
    m.handle_medium_idle(us(1000), &mut out);
    let (t, o) = fire(&mut m, &out, MacTimer::Access);
    assert_eq!(t, us(1000 + 50 + 20 * (k - 2)));
    assert_eq!(on_air(&o).unwrap().kind, FrameKind::Rts);
    // A stale timer generation is ignored.
    let mut o = Vec::new();
    m.handle_timer(t, MacTimer::Access, 0, &mut o);
    assert!(o.is_empty());
}

#[test]
fn short_retry_limit_drops_and_signals_link_failure() {
    let mut a = dcf(A, 5);
    let mut out = Vec::new();
    a.handle_msdu(us(0), msdu(), B, &mut out);
    let mut cws = Vec::new();
    let mut now;
    let mut rts_sent = 0;
    loop {
        let (t, o) = fire(&mut a, &out, MacTimer::Access);
        let f = on_air(&o).unwrap();
        assert_eq!(f.kind, FrameKind::Rts);
        assert_eq!(f.retry, rts_sent > 0);
        rts_sent += 1;
        now = t + f.airtime();
        let mut o = Vec::new();
        a.handle_tx_end(now, &mut o);
        let (tt, o) = fire(&mut a, &o, MacTimer::Timeout);
        assert_eq!(tt, now + Duration::from_micros(10 + 304 + 20));
        cws.push(a.cw());
        if o.iter().any(|x| matches!(x, MacAction::TxFailed { .. })) {
            assert!(o.contains(&MacAction::TxFailed {
                msdu: msdu(),
                next_hop: B
            }));
            break;
        }
        out = o;
    }
    assert_eq!(rts_sent, 7);
    assert_eq!(cws, vec![63, 127, 255, 511, 1023, 1023, 31]);
    assert_eq!(a.stats.retry_drops, 1);
    // One MSDU started, whose first RTS failed: the six retries are not
    // first attempts.
    assert_eq!((a.stats.msdus_started, a.stats.first_rts_failed), (1, 1));
    assert!(a.wants_msdu());
}

#[test]
fn long_retry_limit_counts_data_after_cts() {
    let mut a = dcf(A, 6);
    let mut out = Vec::new();
    a.handle_msdu(us(0), msdu(), B, &mut out);
    let cts = Frame {
        kind: FrameKind::Cts,
        tx: B,
        rx: A,
        duration: Duration::ZERO,
        seq: 0,
        retry: false,
        msdu: None,
        bytes: CTS_BYTES,
        rate: Rate::MBPS_1,
        ext: Extensions::default(),
    };
    let mut data_sent = Vec::new();
    for _ in 0..4 {
        let (t, o) = fire(&mut a, &out, MacTimer::Access);
        let rts = on_air(&o).unwrap();
        let end = t + rts.airtime();
        a.handle_tx_end(end, &mut Vec::new());
        let mut o = Vec::new();
        a.handle_rx(end + Duration::from_micros(314), &cts, &mut o);
        let (t, o) = fire(&mut a, &o, MacTimer::Response);
        let data = on_air(&o).unwrap();
        data_sent.push(data.retry);
        let mut o = Vec::new();
        a.handle_tx_end(t + data.airtime(), &mut o);
        let (_, o) = fire(&mut a, &o, MacTimer::Timeout);
        out = o;
    }
    assert_eq!(data_sent, vec![false, true, true, true]);
    assert!(out.iter().any(|x| matches!(x, MacAction::TxFailed { .. })));
    // Four RTSs, each answered: one MSDU, whose first RTS got its CTS.
    assert_eq!((a.stats.msdus_started, a.stats.first_rts_failed), (1, 0));
}

/// Berger et al. §3.2's "transmission attempts [that] fail to acquire the
/// channel on their first attempt", counted per MSDU: its first RTS gets no
/// CTS. Here the first MSDU's first RTS is lost, its second is answered,
/// its DATA is not acknowledged and its third RTS is lost again (not a
/// first attempt); then it is acknowledged. The second MSDU's first RTS is
/// answered.
#[test]
fn first_rts_failures_are_counted_once_per_msdu() {
    let mut a = dcf(A, 7);
    let cts = Frame::control(FrameKind::Cts, B, A, Duration::ZERO, Rate::MBPS_1);
    let ack = Frame::control(FrameKind::Ack, B, A, Duration::ZERO, Rate::MBPS_1);
    // One RTS, answered by a CTS if `cts_comes`, its DATA by an ACK if
    // `ack_comes`. Returns the actions after the exchange.
    let attempt = |a: &mut Dcf, out: &[MacAction], cts_comes: bool, ack_comes: bool| -> Vec<MacAction> {
        let (t, o) = fire(a, out, MacTimer::Access);
        let rts = on_air(&o).unwrap();
        assert_eq!(rts.kind, FrameKind::Rts);
        let end = t + rts.airtime();
        let mut o = Vec::new();
        a.handle_tx_end(end, &mut o);
        if !cts_comes {
            return fire(a, &o, MacTimer::Timeout).1;
        }
        let mut o = Vec::new();
        a.handle_rx(end + Duration::from_micros(314), &cts, &mut o);
        let (t, o) = fire(a, &o, MacTimer::Response);
        let data = on_air(&o).unwrap();
        let end = t + data.airtime();
        let mut o = Vec::new();
        a.handle_tx_end(end, &mut o);
        if !ack_comes {
            return fire(a, &o, MacTimer::Timeout).1;
        }
        let mut o = Vec::new();
        a.handle_rx(end + Duration::from_micros(314), &ack, &mut o);
        o
    };
    let mut out = Vec::new();
    a.handle_msdu(us(0), msdu(), B, &mut out);
    let out = attempt(&mut a, &out, false, false);
    assert_eq!((a.stats.msdus_started, a.stats.first_rts_failed), (1, 1));
    let out = attempt(&mut a, &out, true, false);
    let out = attempt(&mut a, &out, false, false);
    let mut out = attempt(&mut a, &out, true, true);
    assert!(out.contains(&MacAction::TxDone {
        msdu: msdu(),
        next_hop: B
    }));
    assert_eq!((a.stats.msdus_started, a.stats.first_rts_failed), (1, 1));
    a.handle_msdu(us(100_000), other_msdu(), B, &mut out);
    attempt(&mut a, &out, true, true);
    assert_eq!((a.stats.msdus_started, a.stats.first_rts_failed), (2, 1));
}

#[test]
fn duplicate_data_is_acked_but_not_delivered_twice() {
    let mut b = dcf(B, 7);
    let data = data(A, 9, false);
    let mut o = Vec::new();
    b.handle_rx(us(10), &data, &mut o);
    assert_eq!(o.iter().filter(|x| matches!(x, MacAction::Deliver { .. })).count(), 1);
    let (_, t) = fire(&mut b, &o, MacTimer::Response);
    b.handle_tx_end(us(400), &mut Vec::new());
    assert_eq!(on_air(&t).unwrap().kind, FrameKind::Ack);
    let mut o = Vec::new();
    b.handle_rx(us(6000), &Frame { retry: true, ..data }, &mut o);
    assert!(!o.iter().any(|x| matches!(x, MacAction::Deliver { .. })));
    assert!(timer(&o, MacTimer::Response).is_some());
    assert_eq!(b.stats.duplicates, 1);
}

#[test]
fn broadcast_goes_without_rts_or_ack_at_the_basic_rate() {
    let mut a = dcf(A, 8);
    let mut out = Vec::new();
    a.handle_msdu(us(0), msdu(), BROADCAST, &mut out);
    let (t, o) = fire(&mut a, &out, MacTimer::Access);
    let f = on_air(&o).unwrap();
    assert_eq!(
        (f.kind, f.rx, f.rate, f.duration),
        (FrameKind::Data, BROADCAST, Rate::MBPS_1, Duration::ZERO)
    );
    let mut o = Vec::new();
    a.handle_tx_end(t + f.airtime(), &mut o);
    assert!(o.contains(&MacAction::TxDone {
        msdu: msdu(),
        next_hop: BROADCAST
    }));
    assert!(timer(&o, MacTimer::Timeout).is_none());
}

/// A station whose MSDU for C backs off with at least `min` slots, the
/// medium busy since 0 and idle again at 0 (DIFS ends at 50 µs).
fn backing_off(me: u32, min: u64) -> (Dcf, u64) {
    (1..100)
        .find_map(|seed| {
            let mut m = dcf(me, seed);
            m.handle_medium_busy(us(0));
            m.handle_msdu(us(0), msdu(), C, &mut Vec::new());
            let k = m.backoff_slots() as u64;
            m.handle_medium_idle(us(0), &mut Vec::new());
            (k >= min).then_some((m, k))
        })
        .unwrap()
}

fn other_msdu() -> Msdu {
    Msdu {
        packet: 8,
        bytes: 1028,
        label: None,
        ff_run: 0,
    }
}

/// The second slot sends while the MSDU in hand stays frozen in backoff.
/// B holds an MSDU for C with k slots; two slots pass, then a frame from
/// A (95–399) invites B's packet for A (as quick-exchange, fast-forward or
/// OPET's ready-to-receive will):
///
/// ```text
///  A:             |-- invitation --|                                   |-ACK 304-|
///                95               399                                4835      5139
///  B: |DIFS|2 slots|                  SIFS|----- DATA, 2nd slot 4416 -----|         |DIFS|k-2 slots|
///     0   50      90                     409                            4825       5139 5189
/// ```
#[test]
fn second_slot_sends_while_the_first_stays_frozen() {
    let (mut b, k) = backing_off(B, 3);
    b.handle_medium_busy(us(95));
    assert_eq!(b.backoff_slots() as u64, k - 2, "two whole slots elapsed");
    let mut out = Vec::new();
    b.send_from_second_slot(us(399), other_msdu(), A, Retries::default(), &mut out);
    b.handle_medium_idle(us(399), &mut out);
    // The idle medium does not restart the countdown during the exchange.
    assert!(timer(&out, MacTimer::Access).is_none());
    let (t, o) = fire(&mut b, &out, MacTimer::Response);
    assert_eq!(t, us(409));
    let data = on_air(&o).unwrap();
    assert!(b.transmitting_response());
    // The second slot's MSDU has the next sequence number (the first has 0).
    assert_eq!(
        (data.kind, data.rx, data.seq, data.retry, data.msdu),
        (FrameKind::Data, A, 1, false, Some(other_msdu()))
    );
    assert_eq!(data.duration, Duration::from_micros(314));
    assert_eq!(data.airtime(), Duration::from_micros(4416));
    b.handle_medium_busy(us(409));
    let mut out = Vec::new();
    b.handle_tx_end(us(4825), &mut out);
    assert_eq!(timer(&out, MacTimer::Timeout).unwrap().0, us(5159));
    let ack = Frame::control(FrameKind::Ack, A, B, Duration::ZERO, Rate::MBPS_1);
    let mut out = Vec::new();
    b.handle_rx(us(5139), &ack, &mut out);
    assert!(out.contains(&MacAction::TxDone {
        msdu: other_msdu(),
        next_hop: A
    }));
    b.handle_medium_idle(us(5139), &mut out);
    // The first slot kept its MSDU, its k - 2 slots and CW; no new draw.
    assert_eq!(b.current_msdu(), Some((msdu(), C)));
    assert_eq!((b.backoff_slots() as u64, b.cw()), (k - 2, 31));
    let (t, o) = fire(&mut b, &out, MacTimer::Access);
    assert_eq!(t, us(5139 + 50 + 20 * (k - 2)));
    let rts = on_air(&o).unwrap();
    assert_eq!((rts.kind, rts.rx), (FrameKind::Rts, C));
}

/// A second-slot MSDU whose ACK does not come goes back to the queue with
/// its long retry count (DATA inside a reserved exchange, §9.3.4.4); the
/// first slot's CW and frozen backoff are untouched.
///
/// ```text
///  B: |DIFS|2 slots|     SIFS|----- DATA, 2nd slot 4416 -----|--- ACKTimeout 334 ---|
///     0   50      90    409                                4825                   5159
/// ```
#[test]
fn second_slot_failure_requeues_with_its_retry_count() {
    let (mut b, k) = backing_off(B, 3);
    b.handle_medium_busy(us(95));
    let mut out = Vec::new();
    b.send_from_second_slot(us(399), other_msdu(), A, Retries::default(), &mut out);
    let (_, o) = fire(&mut b, &out, MacTimer::Response);
    assert!(on_air(&o).is_some());
    let mut out = Vec::new();
    b.handle_tx_end(us(4825), &mut out);
    let (t, o) = fire(&mut b, &out, MacTimer::Timeout);
    assert_eq!(t, us(5159));
    assert!(o.contains(&MacAction::Requeue {
        msdu: other_msdu(),
        next_hop: A,
        retries: Retries {
            short: 0,
            long: 1,
            seq: Some(1)
        }
    }));
    assert_eq!((b.backoff_slots() as u64, b.cw()), (k - 2, 31));
    assert_eq!(b.held_msdus().collect::<Vec<_>>(), vec![(msdu(), C)]);
}

/// A retransmission arrives after an interleaved frame from the same
/// transmitter, and the duplicate filter still catches it. A sends P7
/// (seq 0) without RTS; B takes it, but its ACK is lost at A. Before A's
/// retry, a frame from B (4900–5204) invites A's second slot, which sends
/// P8 (seq 1). Then A retransmits seq 0: a last-number-only filter would
/// deliver P7 twice.
///
/// ```text
///  A: |DIFS|-- DATA seq 0 4416 --|         (ACK lost)       |SIFS|-- DATA seq 1 4416 --|
///     0   50                   4466                           5214                    9630
///  B:                            |SIFS|-ACK 304-|  |-invite-|                           |SIFS|-ACK 304-|
///                                   4476      4780 4900    5204                            9640      9944
///  A: |DIFS|k slots|-- DATA seq 0, retry --|
///     9944 9994  9994+20k
/// ```
#[test]
fn retransmission_after_an_interleaved_frame_is_a_duplicate() {
    let cfg = DcfConfig {
        rts_threshold_bytes: 3000,
        ..DcfConfig::default()
    };
    let mut a = station_with(A, cfg.clone(), 11);
    let mut b = station_with(B, cfg, 11);
    let mut out = Vec::new();
    a.handle_msdu(us(0), msdu(), B, &mut out);
    let (t, o) = fire(&mut a, &out, MacTimer::Access);
    assert_eq!(t, us(50));
    let data0 = on_air(&o).unwrap();
    assert_eq!((data0.seq, data0.retry), (0, false));
    let mut out = Vec::new();
    a.handle_medium_busy(us(50));
    a.handle_tx_end(us(4466), &mut out);
    let timeout = out.clone();

    let mut bo = Vec::new();
    b.handle_rx(us(4466), &data0, &mut bo);
    assert!(bo.contains(&MacAction::Deliver { msdu: msdu(), from: A }));
    let (t, o) = fire(&mut b, &bo, MacTimer::Response);
    assert_eq!(t, us(4476));
    assert_eq!(on_air(&o).unwrap().kind, FrameKind::Ack);
    b.handle_tx_end(us(4780), &mut Vec::new());

    // The ACK arrives corrupted at A: EIFS from 4780; the timeout at 4800
    // draws a backoff from CW 63.
    a.handle_rx_error(us(4780));
    a.handle_medium_idle(us(4780), &mut Vec::new());
    let (t, o) = fire(&mut a, &timeout, MacTimer::Timeout);
    assert_eq!(t, us(4800));
    assert_eq!(a.cw(), 63);
    let k = a.backoff_slots() as u64;
    assert_eq!(timer(&o, MacTimer::Access).unwrap().0, us(4780 + 364 + 20 * k));

    a.handle_medium_busy(us(4900));
    let mut out = Vec::new();
    a.send_from_second_slot(us(5204), other_msdu(), B, Retries::default(), &mut out);
    a.handle_medium_idle(us(5204), &mut out);
    let (t, o) = fire(&mut a, &out, MacTimer::Response);
    assert_eq!(t, us(5214));
    let data1 = on_air(&o).unwrap();
    assert_eq!((data1.seq, data1.retry, data1.msdu), (1, false, Some(other_msdu())));
    a.handle_medium_busy(us(5214));
    let mut out = Vec::new();
    a.handle_tx_end(us(9630), &mut out);

    let mut bo = Vec::new();
    b.handle_rx(us(9630), &data1, &mut bo);
    assert!(bo.contains(&MacAction::Deliver {
        msdu: other_msdu(),
        from: A
    }));
    let (t, o) = fire(&mut b, &bo, MacTimer::Response);
    assert_eq!(t, us(9640));
    let ack = on_air(&o).unwrap();
    b.handle_tx_end(us(9944), &mut Vec::new());

    a.handle_rx(us(9944), &ack, &mut out);
    assert!(out.contains(&MacAction::TxDone {
        msdu: other_msdu(),
        next_hop: B
    }));
    a.handle_medium_idle(us(9944), &mut out);
    assert_eq!(a.backoff_slots() as u64, k, "the countdown had not begun");
    let (t, o) = fire(&mut a, &out, MacTimer::Access);
    assert_eq!(t, us(9944 + 50 + 20 * k));
    let retry0 = on_air(&o).unwrap();
    assert_eq!((retry0.seq, retry0.retry, retry0.msdu), (0, true, Some(msdu())));

    let mut bo = Vec::new();
    b.handle_rx(t + retry0.airtime(), &retry0, &mut bo);
    assert!(!bo.iter().any(|x| matches!(x, MacAction::Deliver { .. })));
    assert!(
        timer(&bo, MacTimer::Response).is_some(),
        "the duplicate is still acknowledged"
    );
    assert_eq!(b.stats.duplicates, 1);
}

/// A data frame from `tx` to B with sequence number `seq`, for the
/// duplicate filter's tests.
fn data(tx: u32, seq: u16, retry: bool) -> Frame {
    Frame {
        kind: FrameKind::Data,
        tx,
        rx: B,
        duration: Duration::from_micros(314),
        seq,
        retry,
        msdu: Some(msdu()),
        bytes: 1056,
        rate: Rate::MBPS_2,
        ext: Extensions::default(),
    }
}

/// The filter keeps `DUP_CACHE_DEPTH` numbers per transmitter: older ones
/// fall out, and a transmitter's numbers do not evict another's.
#[test]
fn duplicate_filter_keeps_recent_numbers_per_transmitter() {
    let mut b = dcf(B, 12);
    for seq in 0..DUP_CACHE_DEPTH as u16 + 1 {
        assert!(!b.is_duplicate(&data(A, seq, false)));
        assert!(!b.is_duplicate(&data(C, 100 + seq, false)));
    }
    // Seq 0 fell out; 1..=4 are remembered.
    assert!(!b.is_duplicate(&data(A, 0, true)));
    assert!(b.is_duplicate(&data(A, 2, true)));
    assert!(b.is_duplicate(&data(C, 104, true)));
    // Without the Retry bit a number seen before is a new MSDU.
    assert!(!b.is_duplicate(&data(A, 3, false)));
}

/// Transmitters first heard in any order each keep their own numbers (the
/// filter finds them by halving, `Dcf::dup_cache`).
#[test]
fn duplicate_filter_finds_each_of_many_transmitters() {
    let mut b = dcf(B, 12);
    let order = [40u32, 7, 93, 7, 0, 61, 93, 25, 99, 40, 12];
    for (i, &tx) in order.iter().enumerate() {
        assert!(!b.is_duplicate(&data(tx, 1_000 + tx as u16 + i as u16, false)));
    }
    for (i, &tx) in order.iter().enumerate() {
        assert!(
            b.is_duplicate(&data(tx, 1_000 + tx as u16 + i as u16, true)),
            "transmitter {tx}"
        );
        assert!(!b.is_duplicate(&data(tx, 3_000 + i as u16, true)), "transmitter {tx}");
    }
}

/// §9.3.2.10: sequence numbers count modulo 4096. The sender wraps from 4095
/// to 0, an MSDU that went out before keeps its number across the wrap, and
/// the receiver still recognises the retransmission of a number from just
/// before the wrap, while the new numbers after it are new MSDUs.
#[test]
fn sequence_numbers_wrap_at_4096_and_the_filter_follows() {
    let mut a = dcf(A, 3);
    a.next_seq = 4094;
    let fresh: Vec<u16> = (0..3).map(|_| a.hold(msdu(), B, Retries::default()).seq).collect();
    assert_eq!(fresh, [4094, 4095, 0]);
    let again = Retries {
        seq: Some(4095),
        ..Retries::default()
    };
    assert_eq!(a.hold(msdu(), B, again).seq, 4095, "a retry keeps its number");
    assert_eq!(a.hold(msdu(), B, Retries::default()).seq, 1);

    let mut b = dcf(B, 3);
    for seq in [4094, 4095, 0] {
        assert!(!b.is_duplicate(&data(A, seq, false)));
    }
    assert!(b.is_duplicate(&data(A, 4095, true)));
    assert!(
        !b.is_duplicate(&data(A, 1, true)),
        "a first number after the wrap is new"
    );
}

/// A backoff drawn at a CTS timeout counts its slots from the timeout on
/// (§9.3.2.6: the station "shall invoke its backoff procedure upon
/// expiration of the CTSTimeout interval"), not from DIFS after its own
/// RTS, although the medium has been idle since then:
///
/// ```text
///  A: |DIFS|--RTS 352--|    CTSTimeout 334    |-k slots-|RTS
///     0   50          402                    736      736+20k
/// ```
#[test]
fn backoff_after_a_cts_timeout_counts_from_the_timeout() {
    for seed in 1..40 {
        let mut a = dcf(A, seed);
        let mut out = Vec::new();
        a.handle_msdu(us(0), msdu(), B, &mut out);
        let (t, o) = fire(&mut a, &out, MacTimer::Access);
        assert_eq!((t, transmitted(&o).kind), (us(50), FrameKind::Rts));
        a.handle_medium_busy(us(50));
        let mut out = Vec::new();
        a.handle_tx_end(us(402), &mut out);
        a.handle_medium_idle(us(402), &mut out);
        let (t, o) = fire(&mut a, &out, MacTimer::Timeout);
        assert_eq!(t, us(736));
        let k = a.backoff_slots() as u64;
        assert!(k <= 63);
        assert_eq!(
            timer(&o, MacTimer::Access).unwrap().0,
            us(736 + 20 * k),
            "seed {seed}, k {k}"
        );
    }
}

/// EIFS follows the erroneous frame only (§9.3.2.3.7: it "shall begin
/// following indication by the PHY that the medium is idle after detection
/// of the erroneous frame"): after a later busy period that ended without
/// an error, DIFS applies again.
///
/// ```text
///  C: |--- frame, in error ---|   |--- sensed, no error ---|DIFS|
///     0                      300 400                      700  750
/// ```
#[test]
fn eifs_is_not_used_after_a_later_busy_period() {
    let mut c = dcf(C, 4);
    let mut out = Vec::new();
    c.handle_medium_busy(us(0));
    c.handle_rx_error(us(300));
    c.handle_medium_idle(us(300), &mut out);
    c.handle_medium_busy(us(400));
    c.handle_medium_idle(us(700), &mut out);
    let mut out = Vec::new();
    c.handle_msdu(us(710), msdu(), B, &mut out);
    assert_eq!(timer(&out, MacTimer::Access).unwrap().0, us(750));
}
