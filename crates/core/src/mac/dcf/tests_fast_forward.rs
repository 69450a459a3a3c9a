//! Fast-forward timing tests (Berger et al. §3.2), literal microseconds.
//! A sends a 1040-B MSDU to B; B forwards it to C at once with an ACK-RTS.
//! E hears only B. Quick-exchange is off (CTS 304 µs). The spec's table,
//! shifted by A's DIFS (50 µs):
//!
//! ```text
//!  A: |DIFS|-RTS 352-|         |---- DATA 4464 ----|
//!     0   50        402      726                5190
//!  B:                  |-CTS-|                     |-ACK-RTS 400-|           |---- DATA_f 4464 ----|
//!                     412  716                   5200          5600        5924                10388
//!  C:                                                             |-CTS 304-|                       |-ACK 304-|
//!                                                                5610     5914                   10398     10702
//!  Duration: ACK-RTS 5102 (A's and E's NAV to 10702; C's NAV untouched); CTS 4788
//! ```

use super::harness::{fire, station_with, timer, transmitted, us};
use super::*;

const A: u32 = 0;
const B: u32 = 1;
const C: u32 = 2;
const E: u32 = 4;

fn station(me: u32) -> Dcf {
    let cfg = DcfConfig {
        fast_forward: FastForward {
            enabled: true,
            ..FastForward::default()
        },
        ..DcfConfig::default()
    };
    station_with(me, cfg, 1)
}

const D: Msdu = Msdu {
    packet: 1,
    bytes: 1040,
    label: None,
    ff_run: 0,
};
/// B's copy of the packet, queued for C.
const DF: Msdu = Msdu {
    packet: 9,
    bytes: 1040,
    label: None,
    ff_run: 0,
};

/// A's DATA ends at 5190 and B answers with the ACK-RTS (5200–5600).
/// Returns A with its actions at 5190, B with its actions at 5600, and
/// the ACK-RTS.
fn up_to_ack_rts() -> (Dcf, Vec<MacAction>, Dcf, Vec<MacAction>, Frame) {
    let (mut a, mut b) = (station(A), station(B));
    let mut out = Vec::new();
    a.handle_msdu(us(0), D, B, &mut out);
    let (_, o) = fire(&mut a, &out, MacTimer::Access);
    assert_eq!(transmitted(&o).kind, FrameKind::Rts);
    a.handle_tx_end(us(402), &mut Vec::new());
    let cts = Frame::control(FrameKind::Cts, B, A, Duration::from_micros(4788), Rate::MBPS_1);
    let mut out = Vec::new();
    a.handle_rx(us(716), &cts, &mut out);
    let (t, o) = fire(&mut a, &out, MacTimer::Response);
    assert_eq!(t, us(726));
    let data = transmitted(&o);
    let mut ao = Vec::new();
    a.handle_tx_end(us(5190), &mut ao);
    // With fast-forward on, A's wait covers an ACK-RTS: SIFS + 400 + slot.
    assert_eq!(timer(&ao, MacTimer::Timeout).unwrap().0, us(5620));

    let mut bo = Vec::new();
    b.handle_rx(us(5190), &data, &mut bo);
    let deliver = bo.iter().position(|x| *x == MacAction::Deliver { msdu: D, from: A });
    let want = bo.iter().position(|x| *x == MacAction::WantForward { from: A });
    assert!(
        deliver.unwrap() < want.unwrap(),
        "the packet is routed before the question"
    );
    b.forward(Forward::Queued {
        msdu: DF,
        next_hop: C,
        retries: Retries::default(),
    });
    let (t, o) = fire(&mut b, &bo, MacTimer::Response);
    assert_eq!(t, us(5200));
    let ack_rts = transmitted(&o);
    assert!(b.transmitting_response());
    assert_eq!(
        (ack_rts.kind, ack_rts.rx, ack_rts.ext.rx2, ack_rts.bytes),
        (FrameKind::Ack, A, Some(C), 26)
    );
    assert_eq!(
        (ack_rts.airtime(), ack_rts.duration),
        (Duration::from_micros(400), Duration::from_micros(5102))
    );
    let mut bo = Vec::new();
    b.handle_tx_end(us(5600), &mut bo);
    // B awaits C's CTS: SIFS + 304 + slot.
    assert_eq!(timer(&bo, MacTimer::Timeout).unwrap().0, us(5934));
    (a, ao, b, bo, ack_rts)
}

#[test]
fn complete_fast_forward() {
    let (mut a, _, mut b, _, ack_rts) = up_to_ack_rts();
    let mut out = Vec::new();
    a.handle_rx(us(5600), &ack_rts, &mut out);
    assert!(out.contains(&MacAction::TxDone { msdu: D, next_hop: B }));
    assert_eq!(a.nav().end(), us(10702), "A keeps quiet while the packet moves on");
    let mut e = station(E);
    e.handle_rx(us(5600), &ack_rts, &mut Vec::new());
    assert_eq!(e.nav().end(), us(10702));

    let mut c = station(C);
    let mut co = Vec::new();
    c.handle_rx(us(5600), &ack_rts, &mut co);
    assert_eq!(c.nav().end(), SimTime::ZERO, "the RTS part is answered, not obeyed");
    let (t, o) = fire(&mut c, &co, MacTimer::Response);
    assert_eq!(t, us(5610));
    let cts = transmitted(&o);
    assert_eq!(
        (cts.kind, cts.rx, cts.duration),
        (FrameKind::Cts, B, Duration::from_micros(4788))
    );
    c.handle_tx_end(us(5914), &mut Vec::new());

    let mut bo = Vec::new();
    b.handle_rx(us(5914), &cts, &mut bo);
    let (t, o) = fire(&mut b, &bo, MacTimer::Response);
    assert_eq!(t, us(5924));
    let data_f = transmitted(&o);
    // The packet's run of fast-forwarded hops grows by this one.
    let df_on_air = Msdu { ff_run: 1, ..DF };
    assert_eq!((data_f.rx, data_f.msdu, data_f.retry), (C, Some(df_on_air), false));
    assert_eq!(data_f.airtime(), Duration::from_micros(4464));
    let mut bo = Vec::new();
    b.handle_tx_end(us(10388), &mut bo);
    assert_eq!(timer(&bo, MacTimer::Timeout).unwrap().0, us(10818));
    let mut co = Vec::new();
    c.handle_rx(us(10388), &data_f, &mut co);
    assert!(co.contains(&MacAction::Deliver {
        msdu: df_on_air,
        from: B
    }));
    let (t, o) = fire(&mut c, &co, MacTimer::Response);
    assert_eq!(t, us(10398));
    let ack = transmitted(&o);
    let mut bo = Vec::new();
    b.handle_rx(us(10702), &ack, &mut bo);
    assert!(bo.contains(&MacAction::TxDone { msdu: DF, next_hop: C }));
    assert_eq!(ff_counts(&b), (1, 1, 0, 0));
    assert_eq!((b.cw(), b.held_msdus().count()), (31, 0));
}

/// No CTS comes back (C's NAV set, or the ACK-RTS lost at C): at 5934 the
/// forwarded packet fails as an RTS would (short retry count) and goes
/// back to the head of the queue, to normal contention. A got its ACK.
#[test]
fn fast_forward_without_cts_falls_back_to_contention() {
    let (mut a, _, mut b, bo, ack_rts) = up_to_ack_rts();
    let mut out = Vec::new();
    a.handle_rx(us(5600), &ack_rts, &mut out);
    assert!(out.contains(&MacAction::TxDone { msdu: D, next_hop: B }));
    let (t, o) = fire(&mut b, &bo, MacTimer::Timeout);
    assert_eq!(t, us(5934));
    assert!(o.contains(&MacAction::Requeue {
        msdu: DF,
        next_hop: C,
        retries: Retries {
            short: 1,
            long: 0,
            seq: None
        }
    }));
    assert!(!o.iter().any(|x| matches!(x, MacAction::TxFailed { .. })));
    assert_eq!(b.cw(), 31);
    assert_eq!(ff_counts(&b), (1, 0, 1, 0));
}

/// (attempted, completed, no_cts, data_failed) of a relay.
fn ff_counts(m: &Dcf) -> (u64, u64, u64, u64) {
    let s = &m.stats;
    (s.ff_attempted, s.ff_completed, s.ff_no_cts, s.ff_data_failed)
}

/// C's CTS comes (5914), DATA_f goes (5924–10388), its ACK does not: at
/// 10818 the forwarded packet fails as DATA after RTS/CTS (long retry
/// count) and goes back to the head of the queue with its sequence number.
#[test]
fn forwarded_data_without_ack_is_a_data_failure() {
    let (_, _, mut b, _, _) = up_to_ack_rts();
    let cts = Frame::control(FrameKind::Cts, C, B, Duration::from_micros(4788), Rate::MBPS_1);
    let mut bo = Vec::new();
    b.handle_rx(us(5914), &cts, &mut bo);
    let (_, o) = fire(&mut b, &bo, MacTimer::Response);
    let data_f = transmitted(&o);
    let mut bo = Vec::new();
    b.handle_tx_end(us(10388), &mut bo);
    let (t, o) = fire(&mut b, &bo, MacTimer::Timeout);
    assert_eq!(t, us(10818));
    assert!(o.contains(&MacAction::Requeue {
        msdu: DF,
        next_hop: C,
        retries: Retries {
            short: 0,
            long: 1,
            seq: Some(data_f.seq)
        }
    }));
    assert_eq!(ff_counts(&b), (1, 0, 0, 1));
}

/// The MSDU in hand is forwarded and C stays silent: it contends again
/// with a doubled CW, and the hop it then makes after its own RTS is no
/// fast-forward (its data frame carries a run of 0).
#[test]
fn the_msdu_in_hand_without_cts_contends_again() {
    let mut b = station(B);
    let mut bo = Vec::new();
    b.handle_rx(us(5190), &data_with_run(0), &mut bo);
    b.handle_msdu(us(5190), DF, C, &mut bo);
    assert!(b.forward(Forward::Current));
    let (_, o) = fire(&mut b, &bo, MacTimer::Response);
    assert_eq!(transmitted(&o).ext.rx2, Some(C));
    let mut bo = Vec::new();
    b.handle_tx_end(us(5600), &mut bo);
    let (t, o) = fire(&mut b, &bo, MacTimer::Timeout);
    assert_eq!(t, us(5934));
    assert_eq!((ff_counts(&b), b.cw()), ((1, 0, 1, 0), 63));
    assert_eq!(b.current_msdu(), Some((DF, C)));
    let mut bo = o;
    b.handle_medium_idle(us(5934), &mut bo);
    let (t, o) = fire(&mut b, &bo, MacTimer::Access);
    let rts = transmitted(&o);
    assert_eq!((rts.kind, rts.rx, rts.retry), (FrameKind::Rts, C, true));
    b.handle_tx_end(t + rts.airtime(), &mut Vec::new());
    let cts = Frame::control(FrameKind::Cts, C, B, Duration::from_micros(4788), Rate::MBPS_1);
    let mut bo = Vec::new();
    b.handle_rx(t + rts.airtime() + Duration::from_micros(314), &cts, &mut bo);
    let (_, o) = fire(&mut b, &bo, MacTimer::Response);
    assert_eq!(transmitted(&o).msdu, Some(DF), "run 0: not a fast-forward");
    // The ACK-RTS was the MSDU's first RTS-like frame; it is no contended
    // RTS, so the MSDU never counts as started.
    assert_eq!((b.stats.msdus_started, b.stats.first_rts_failed), (0, 0));
}

/// A duplicate is acknowledged with a plain ACK: no fast-forward.
#[test]
fn no_fast_forward_for_a_duplicate() {
    let mut b = station(B);
    let data = Frame {
        kind: FrameKind::Data,
        tx: A,
        rx: B,
        duration: Duration::from_micros(314),
        seq: 3,
        retry: false,
        msdu: Some(D),
        bytes: 1068,
        rate: Rate::MBPS_2,
        ext: Extensions::default(),
    };
    let mut o = Vec::new();
    b.handle_rx(us(5190), &data, &mut o);
    assert!(o.contains(&MacAction::WantForward { from: A }));
    let (_, t) = fire(&mut b, &o, MacTimer::Response);
    assert!(transmitted(&t).ext.rx2.is_none(), "not forwarded: a plain ACK");
    b.handle_tx_end(us(5504), &mut Vec::new());
    let mut o = Vec::new();
    b.handle_rx(us(9000), &Frame { retry: true, ..data }, &mut o);
    assert!(!o.iter().any(|x| matches!(x, MacAction::WantForward { .. })));
}

/// A station with fast-forward on and `consecutive_limit = limit`.
fn limited_station(me: u32, limit: u32) -> Dcf {
    let cfg = DcfConfig {
        fast_forward: FastForward {
            enabled: true,
            consecutive_limit: limit,
            ..FastForward::default()
        },
        ..DcfConfig::default()
    };
    station_with(me, cfg, 1)
}

/// A's DATA, ending at 5190, carries a packet that came over `run`
/// fast-forwarded hops in a row, counting A's hop to B.
fn data_with_run(run: u8) -> Frame {
    Frame {
        kind: FrameKind::Data,
        tx: A,
        rx: B,
        duration: Duration::from_micros(314),
        seq: 3,
        retry: false,
        msdu: Some(Msdu { ff_run: run, ..D }),
        bytes: 1068,
        rate: Rate::MBPS_2,
        ext: Extensions::default(),
    }
}

/// The consecutive limit (Berger et al. §3.2), 3 here. The packet reached
/// B over three fast-forwarded hops; the node hands its copy to the MAC at
/// once (the MAC held nothing) and names it as the packet to forward. B
/// refuses: a plain ACK, not an ACK-RTS, and the packet contends for its
/// next hop like any other; its data frame starts the run again at 0.
///
/// ```text
///  A: ...|---- DATA (run 3) 4464 ----|
///       726                        5190
///  B:                                 |-ACK 304-|  DIFS  backoff k·20  |-RTS 352-|
///                                    5200     5504     5554         5554+20k
///  Duration: ACK 0 (no reservation: A's NAV stays clear)
/// ```
#[test]
fn the_consecutive_limit_stops_fast_forward() {
    let mut a = limited_station(A, 3);
    let mut b = limited_station(B, 3);
    let data = data_with_run(3);
    let mut bo = Vec::new();
    b.handle_rx(us(5190), &data, &mut bo);
    assert!(bo.contains(&MacAction::Deliver {
        msdu: Msdu { ff_run: 3, ..D },
        from: A
    }));
    assert!(bo.contains(&MacAction::WantForward { from: A }));
    // The node stack routes the packet and gives B's MAC its copy.
    let df3 = Msdu { ff_run: 3, ..DF };
    b.handle_msdu(us(5190), df3, C, &mut bo);
    assert!(!b.forward(Forward::Current), "three fast-forwarded hops: no fourth");
    // A queued packet with the same run is refused too, and stays with the
    // caller (nothing taken into the second slot, nothing given back).
    assert!(!b.forward(Forward::Queued {
        msdu: Msdu { packet: 10, ..df3 },
        next_hop: C,
        retries: Retries::default(),
    }));
    assert_eq!((b.stats.ff_limited, b.stats.ff_attempted), (2, 0));
    assert_eq!(b.held_msdus().collect::<Vec<_>>(), vec![(df3, C)]);

    let (t, o) = fire(&mut b, &bo, MacTimer::Response);
    assert_eq!(t, us(5200));
    let ack = transmitted(&o);
    assert_eq!(
        (ack.kind, ack.rx, ack.ext.rx2, ack.bytes, ack.duration),
        (FrameKind::Ack, A, None, 14, Duration::ZERO)
    );
    assert_eq!(ack.airtime(), Duration::from_micros(304));
    assert!(!o.iter().any(|x| matches!(x, MacAction::Requeue { .. })));
    let mut ao = Vec::new();
    a.handle_rx(us(5504), &ack, &mut ao);
    assert_eq!(a.nav().end(), SimTime::ZERO, "a plain ACK reserves nothing");

    // B contends for the packet: DIFS and its backoff after its ACK.
    let mut bo = Vec::new();
    b.handle_tx_end(us(5504), &mut bo);
    b.handle_medium_idle(us(5504), &mut bo);
    let k = u64::from(b.backoff_slots());
    let (t, o) = fire(&mut b, &bo, MacTimer::Access);
    assert_eq!(t, us(5554 + 20 * k));
    let rts = transmitted(&o);
    assert_eq!((rts.kind, rts.rx), (FrameKind::Rts, C));
    let end = t + rts.airtime();
    b.handle_tx_end(end, &mut Vec::new());
    let cts = Frame::control(FrameKind::Cts, C, B, Duration::from_micros(4788), Rate::MBPS_1);
    let mut bo = Vec::new();
    b.handle_rx(end + Duration::from_micros(314), &cts, &mut bo);
    let (_, o) = fire(&mut b, &bo, MacTimer::Response);
    let sent = transmitted(&o);
    assert_eq!(
        sent.msdu,
        Some(Msdu { ff_run: 0, ..df3 }),
        "a hop by contention ends the run"
    );
}

/// Under the limit the packet goes on, and its run grows by this hop: two
/// fast-forwarded hops in, the DATA_f to C carries 3 (the spec's table
/// from 5190 on, as in `complete_fast_forward`).
#[test]
fn under_the_limit_the_run_grows() {
    let mut b = limited_station(B, 3);
    let mut bo = Vec::new();
    b.handle_rx(us(5190), &data_with_run(2), &mut bo);
    let df2 = Msdu { ff_run: 2, ..DF };
    assert!(b.forward(Forward::Queued {
        msdu: df2,
        next_hop: C,
        retries: Retries::default(),
    }));
    let (t, o) = fire(&mut b, &bo, MacTimer::Response);
    assert_eq!(t, us(5200));
    let ack_rts = transmitted(&o);
    assert_eq!(
        (ack_rts.ext.rx2, ack_rts.duration),
        (Some(C), Duration::from_micros(5102))
    );
    b.handle_tx_end(us(5600), &mut Vec::new());
    let cts = Frame::control(FrameKind::Cts, C, B, Duration::from_micros(4788), Rate::MBPS_1);
    let mut bo = Vec::new();
    b.handle_rx(us(5914), &cts, &mut bo);
    let (t, o) = fire(&mut b, &bo, MacTimer::Response);
    assert_eq!(t, us(5924));
    assert_eq!(transmitted(&o).msdu, Some(Msdu { ff_run: 3, ..DF }));
    assert_eq!((b.stats.ff_limited, b.stats.ff_attempted), (0, 1));
}
