//! Quick-exchange timing tests (Berger et al. §3.1), literal microseconds.
//! A sends a TCP segment (D1, a 1040-B MSDU) to B, which returns a TCP ACK
//! (D2, 40 B). C hears only A, D hears only B. With quick-exchange every
//! CTS is 16 B (320 µs). Times are those of the spec's table shifted by
//! A's DIFS (50 µs):
//!
//! ```text
//!  A: |DIFS|--RTS 352--|           |------ DATA1 4464 ------|                |-ACK2 304-|
//!     0   50          402 SIFS   742                     5206  SIFS          5706      6010
//!  B:                     |-CTS(τ=490) 320-|                 |DATA2+ACK1 480|
//!                        412             732              5216           5696
//!  Duration:  RTS 5118 (NAV to 5520); CTS 4788 (to 5520); DATA1 804 (to 6010);
//!             DATA2+ACK1 314 (to 6010); ACK2 0
//! ```

use super::harness::{fire, station_with, timer, transmitted, us};
use super::*;

const A: u32 = 0;
const B: u32 = 1;
const C: u32 = 2;
const D: u32 = 3;

fn cfg(honor: bool) -> DcfConfig {
    DcfConfig {
        quick_exchange: QuickExchange {
            enabled: true,
            honor,
            ..QuickExchange::default()
        },
        ..DcfConfig::default()
    }
}

fn station(me: u32, honor: bool) -> Dcf {
    station_with(me, cfg(honor), 1)
}

const D1: Msdu = Msdu {
    packet: 1,
    bytes: 1040,
    label: None,
    ff_run: 0,
};
const D2: Msdu = Msdu {
    packet: 2,
    bytes: 40,
    label: None,
    ff_run: 0,
};

/// The exchange up to B's CTS(τ) ending at 732, B's D2 taken from the
/// queue on request. Returns A, B, the CTS and B's actions at 732.
fn up_to_cts(honor: bool) -> (Dcf, Dcf, Frame, Vec<MacAction>) {
    let (mut a, mut b) = (station(A, honor), station(B, true));
    let mut out = Vec::new();
    a.handle_msdu(us(0), D1, B, &mut out);
    let (t, o) = fire(&mut a, &out, MacTimer::Access);
    assert_eq!(t, us(50));
    let rts = transmitted(&o);
    assert_eq!(rts.duration, Duration::from_micros(5118));
    a.handle_medium_busy(us(50));
    a.handle_tx_end(us(402), &mut Vec::new());

    let mut bo = Vec::new();
    b.handle_medium_busy(us(50));
    b.handle_rx(us(402), &rts, &mut bo);
    // DATA1 is 1040 B: B asks for a packet for A of at most 360 B.
    assert!(bo.contains(&MacAction::WantReverse {
        peer: A,
        max_bytes: 360
    }));
    b.offer_reverse(D2, A, Retries::default());
    b.handle_medium_idle(us(402), &mut bo);
    let (t, o) = fire(&mut b, &bo, MacTimer::Response);
    assert_eq!(t, us(412));
    let cts = transmitted(&o);
    assert_eq!(
        (cts.kind, cts.rx, cts.bytes, cts.airtime()),
        (FrameKind::Cts, A, 16, Duration::from_micros(320))
    );
    assert_eq!(cts.ext.tau, Duration::from_micros(490));
    // The CTS's Duration is not extended by τ.
    assert_eq!(cts.duration, Duration::from_micros(4788));
    let mut bo = Vec::new();
    b.handle_tx_end(us(732), &mut bo);
    (a, b, cts, bo)
}

#[test]
fn complete_quick_exchange() {
    let (mut a, mut b, cts, bo) = up_to_cts(true);
    // B awaits DATA1: SIFS + 4464 + slot after its CTS.
    assert_eq!(timer(&bo, MacTimer::Timeout).unwrap().0, us(5226));
    let (mut c, mut d) = (station(C, true), station(D, true));
    let mut x = Vec::new();
    d.handle_rx(us(732), &cts, &mut x);
    assert_eq!(d.nav().end(), us(5520));

    let mut out = Vec::new();
    a.handle_rx(us(732), &cts, &mut out);
    let (t, o) = fire(&mut a, &out, MacTimer::Response);
    assert_eq!(t, us(742));
    let data1 = transmitted(&o);
    // Honoured: DATA1's Duration is SIFS + ACK + τ.
    assert_eq!(
        (data1.duration, data1.airtime()),
        (Duration::from_micros(804), Duration::from_micros(4464))
    );
    let mut out = Vec::new();
    a.handle_tx_end(us(5206), &mut out);
    // A awaits DATA2+ACK1: SIFS + 480 + slot.
    assert_eq!(timer(&out, MacTimer::Timeout).unwrap().0, us(5716));
    c.handle_rx(us(5206), &data1, &mut x);
    assert_eq!(c.nav().end(), us(6010), "A's neighbours learn the extension");

    let mut bo = Vec::new();
    b.handle_rx(us(5206), &data1, &mut bo);
    assert!(bo.contains(&MacAction::Deliver { msdu: D1, from: A }));
    let (t, o) = fire(&mut b, &bo, MacTimer::Response);
    assert_eq!(t, us(5216));
    let d2a1 = transmitted(&o);
    assert!(d2a1.ext.piggybacked_ack);
    assert_eq!(
        (d2a1.kind, d2a1.rx, d2a1.msdu, d2a1.bytes),
        (FrameKind::Data, A, Some(D2), 72)
    );
    assert_eq!(
        (d2a1.airtime(), d2a1.duration),
        (Duration::from_micros(480), Duration::from_micros(314))
    );
    let mut bo = Vec::new();
    b.handle_tx_end(us(5696), &mut bo);
    assert_eq!(timer(&bo, MacTimer::Timeout).unwrap().0, us(6030));
    d.handle_rx(us(5696), &d2a1, &mut x);
    assert_eq!(d.nav().end(), us(6010), "B's neighbours learn it from ACK1");

    let mut out = Vec::new();
    a.handle_rx(us(5696), &d2a1, &mut out);
    assert!(out.contains(&MacAction::TxDone { msdu: D1, next_hop: B }));
    assert!(out.contains(&MacAction::Deliver { msdu: D2, from: B }));
    let (t, o) = fire(&mut a, &out, MacTimer::Response);
    assert_eq!(t, us(5706));
    let ack2 = transmitted(&o);
    assert_eq!((ack2.kind, ack2.rx, ack2.duration), (FrameKind::Ack, B, Duration::ZERO));
    a.handle_tx_end(us(6010), &mut Vec::new());

    let mut bo = Vec::new();
    b.handle_rx(us(6010), &ack2, &mut bo);
    assert!(bo.contains(&MacAction::TxDone { msdu: D2, next_hop: A }));
    assert_eq!(b.held_msdus().count(), 0);
    assert_eq!((a.cw(), b.cw()), (31, 31));
    let s = &b.stats;
    assert_eq!(
        (
            s.qe_requested,
            s.qe_honored,
            s.qe_completed,
            s.qe_failed,
            s.qe_fallen_back
        ),
        (1, 1, 1, 0, 0)
    );
}

#[test]
fn declined_quick_exchange_falls_back_to_the_plain_exchange() {
    let (mut a, mut b, cts, _) = up_to_cts(false);
    let mut out = Vec::new();
    a.handle_rx(us(732), &cts, &mut out);
    let (_, o) = fire(&mut a, &out, MacTimer::Response);
    let data1 = transmitted(&o);
    assert_eq!(data1.duration, Duration::from_micros(314), "not extended");
    let mut out = Vec::new();
    a.handle_tx_end(us(5206), &mut out);
    assert_eq!(
        timer(&out, MacTimer::Timeout).unwrap().0,
        us(5540),
        "a plain ACK is awaited"
    );
    let mut c = station(C, true);
    c.handle_rx(us(5206), &data1, &mut Vec::new());
    assert_eq!(c.nav().end(), us(5520));

    // B sees the Duration not extended: plain ACK, D2 back to the queue, uncharged.
    let mut bo = Vec::new();
    b.handle_rx(us(5206), &data1, &mut bo);
    assert!(bo.contains(&MacAction::Requeue {
        msdu: D2,
        next_hop: A,
        retries: Retries::default()
    }));
    let (_, o) = fire(&mut b, &bo, MacTimer::Response);
    let ack = transmitted(&o);
    assert_eq!((ack.kind, ack.ext.piggybacked_ack), (FrameKind::Ack, false));
    b.handle_tx_end(us(5520), &mut Vec::new());
    let mut out = Vec::new();
    a.handle_rx(us(5520), &ack, &mut out);
    assert!(out.contains(&MacAction::TxDone { msdu: D1, next_hop: B }));
    assert_eq!(b.held_msdus().count(), 0);
    // Offered, not honoured: it fell back to the plain exchange.
    let s = &b.stats;
    assert_eq!(
        (
            s.qe_requested,
            s.qe_honored,
            s.qe_completed,
            s.qe_failed,
            s.qe_fallen_back
        ),
        (1, 0, 0, 0, 1)
    );
}

/// CTS(τ) lost, or DATA1 lost: B's DATA1 timeout at 5226 releases D2
/// uncharged. With DATA1 lost, A's wait for DATA2+ACK1 ends at 5716: a
/// failure of DATA sent after RTS/CTS (long retry count, CW doubles).
#[test]
fn data1_lost_releases_the_reverse_packet_and_fails_data1() {
    let (mut a, mut b, cts, bo) = up_to_cts(true);
    let (t, o) = fire(&mut b, &bo, MacTimer::Timeout);
    assert_eq!(t, us(5226));
    assert!(o.contains(&MacAction::Requeue {
        msdu: D2,
        next_hop: A,
        retries: Retries::default()
    }));
    assert_eq!(b.cw(), 31);

    let mut out = Vec::new();
    a.handle_rx(us(732), &cts, &mut out);
    let (_, o) = fire(&mut a, &out, MacTimer::Response);
    assert!(transmitted(&o).duration > Duration::from_micros(314));
    let mut out = Vec::new();
    a.handle_tx_end(us(5206), &mut out);
    let (t, o) = fire(&mut a, &out, MacTimer::Timeout);
    assert_eq!(t, us(5716));
    assert!(!o.iter().any(|x| matches!(x, MacAction::TxFailed { .. })));
    assert_eq!((a.cw(), a.current_msdu()), (63, Some((D1, B))));
    // No DATA1: neither honoured nor fallen back.
    assert_eq!(
        (b.stats.qe_requested, b.stats.qe_honored, b.stats.qe_fallen_back),
        (1, 0, 0)
    );
}

/// Runs the exchange to DATA2+ACK1 (sent by B at 5216–5696); returns the
/// stations, DATA2+ACK1 and B's actions at its end.
fn up_to_data_ack() -> (Dcf, Dcf, Frame, Vec<MacAction>, Vec<MacAction>) {
    let (mut a, mut b, cts, _) = up_to_cts(true);
    let mut out = Vec::new();
    a.handle_rx(us(732), &cts, &mut out);
    let (_, o) = fire(&mut a, &out, MacTimer::Response);
    let data1 = transmitted(&o);
    let mut ao = Vec::new();
    a.handle_tx_end(us(5206), &mut ao);
    let mut bo = Vec::new();
    b.handle_rx(us(5206), &data1, &mut bo);
    let (_, o) = fire(&mut b, &bo, MacTimer::Response);
    let d2a1 = transmitted(&o);
    let mut bo = Vec::new();
    b.handle_tx_end(us(5696), &mut bo);
    (a, b, d2a1, ao, bo)
}

/// DATA2+ACK1 lost whole: A fails DATA1 at 5716 (long retry count), B
/// fails DATA2 at 6030: D2 goes back to the queue with its long retry
/// count, and B's CW (the MSDU in hand's) is untouched.
#[test]
fn data_ack_lost_fails_both_directions() {
    let (mut a, mut b, _, ao, bo) = up_to_data_ack();
    let (t, o) = fire(&mut a, &ao, MacTimer::Timeout);
    assert_eq!((t, a.cw()), (us(5716), 63));
    assert!(!o.iter().any(|x| matches!(x, MacAction::TxDone { .. })));
    let (t, o) = fire(&mut b, &bo, MacTimer::Timeout);
    assert_eq!(t, us(6030));
    assert!(o.contains(&MacAction::Requeue {
        msdu: D2,
        next_hop: A,
        retries: Retries {
            short: 0,
            long: 1,
            seq: Some(0)
        }
    }));
    assert_eq!(b.cw(), 31);
}

/// ACK2 lost: A is done with both packets; B's ACK2 timeout at 6030 sends
/// D2 back to the queue. Its retransmission reaches A as a duplicate: A
/// acknowledges it and does not deliver it twice.
#[test]
fn ack2_lost_the_retransmitted_data2_is_a_duplicate() {
    let (mut a, mut b, d2a1, _, bo) = up_to_data_ack();
    let mut out = Vec::new();
    a.handle_rx(us(5696), &d2a1, &mut out);
    assert!(out.contains(&MacAction::Deliver { msdu: D2, from: B }));
    let (_, o) = fire(&mut a, &out, MacTimer::Response);
    a.handle_tx_end(us(6010), &mut Vec::new());
    assert_eq!(transmitted(&o).kind, FrameKind::Ack);
    let (t, o) = fire(&mut b, &bo, MacTimer::Timeout);
    assert_eq!(t, us(6030));
    assert!(o.iter().any(|x| matches!(x, MacAction::Requeue { .. })));

    // Later B sends D2 in a plain exchange (same sequence number, Retry set).
    let retry = Frame {
        ext: Extensions::default(),
        bytes: D2.bytes + DATA_OVERHEAD_BYTES,
        retry: true,
        ..d2a1
    };
    let mut out = Vec::new();
    a.handle_rx(us(20_000), &retry, &mut out);
    assert!(!out.iter().any(|x| matches!(x, MacAction::Deliver { .. })));
    assert!(timer(&out, MacTimer::Response).is_some());
    assert_eq!(a.stats.duplicates, 1);
}

/// The MSDU in hand is the first candidate: B holds D2 for A in backoff,
/// so it asks the queue for nothing. After ACK2 the MSDU in hand is done:
/// CW reset and a new backoff (§9.3.4.3).
#[test]
fn the_msdu_in_hand_is_the_reverse_packet() {
    let (mut a, mut b) = (station(A, true), station(B, true));
    b.handle_medium_busy(us(0));
    b.handle_msdu(us(0), D2, A, &mut Vec::new());
    let mut out = Vec::new();
    a.handle_msdu(us(0), D1, B, &mut out);
    let (_, o) = fire(&mut a, &out, MacTimer::Access);
    let rts = transmitted(&o);
    let mut bo = Vec::new();
    b.handle_rx(us(402), &rts, &mut bo);
    assert!(!bo.iter().any(|x| matches!(x, MacAction::WantReverse { .. })));
    let (_, o) = fire(&mut b, &bo, MacTimer::Response);
    let cts = transmitted(&o);
    assert_eq!(cts.ext.tau, Duration::from_micros(490));
    b.handle_tx_end(us(732), &mut Vec::new());
    a.handle_tx_end(us(402), &mut Vec::new());
    let mut out = Vec::new();
    a.handle_rx(us(732), &cts, &mut out);
    let (_, o) = fire(&mut a, &out, MacTimer::Response);
    let data1 = transmitted(&o);
    let mut bo = Vec::new();
    b.handle_rx(us(5206), &data1, &mut bo);
    let (_, o) = fire(&mut b, &bo, MacTimer::Response);
    let d2a1 = transmitted(&o);
    assert_eq!((d2a1.msdu, d2a1.seq), (Some(D2), 0));
    b.handle_tx_end(us(5696), &mut Vec::new());
    let ack2 = Frame::control(FrameKind::Ack, A, B, Duration::ZERO, Rate::MBPS_1);
    let mut bo = Vec::new();
    b.handle_rx(us(6010), &ack2, &mut bo);
    assert!(bo.contains(&MacAction::TxDone { msdu: D2, next_hop: A }));
    assert!(b.wants_msdu());
    b.handle_medium_idle(us(6010), &mut bo);
    let k = b.backoff_slots() as u64;
    assert_eq!(timer(&bo, MacTimer::Access).unwrap().0, us(6010 + 50 + 20 * k));
}

/// Over the cap (1040 + 1040 > 1400) nothing is reserved: the CTS carries
/// τ = 0 and the exchange is the standard one.
#[test]
fn over_the_cap_the_cts_carries_no_tau() {
    let (mut a, mut b) = (station(A, true), station(B, true));
    b.handle_medium_busy(us(0));
    b.handle_msdu(us(0), D1, A, &mut Vec::new());
    let mut out = Vec::new();
    a.handle_msdu(us(0), D1, B, &mut out);
    let (_, o) = fire(&mut a, &out, MacTimer::Access);
    let rts = transmitted(&o);
    let mut bo = Vec::new();
    b.handle_rx(us(402), &rts, &mut bo);
    assert!(bo.contains(&MacAction::WantReverse {
        peer: A,
        max_bytes: 360
    }));
    let (_, o) = fire(&mut b, &bo, MacTimer::Response);
    let cts = transmitted(&o);
    assert_eq!((cts.ext.tau, cts.bytes), (Duration::ZERO, 16));
    let mut bo = Vec::new();
    b.handle_tx_end(us(732), &mut bo);
    assert!(timer(&bo, MacTimer::Timeout).is_none(), "no DATA1 wait of its own");
}

/// ACK2 lost at B (interference): B's ACK2 timeout at 6030 sends D2 back to
/// the queue with its retry state (long count 1, sequence number 0); taken
/// from there again, D2 goes in a plain exchange under the same number with
/// the Retry bit, and A, which already took it in, acknowledges the
/// duplicate without delivering it a second time (the spec's failure table:
/// "ACK2 lost | done | ACK2 timeout; retransmits D2 later; A acknowledges
/// the duplicate"). B sensed the lost ACK2 as an error: EIFS (364) from 6010.
///
/// ```text
///  A:  |-ACK2 304-|(lost at B)                   |-CTS 320-|                   |-ACK 304-|
///    5706      6010                            6736      7056                 7540      7844
///  B:             |EIFS 364|--RTS 352--|  SIFS             SIFS|-DATA2 464-| SIFS
///               6010 (6030 timeout)  6374      6726                   7066        7530
/// ```
#[test]
fn ack2_lost_data2_goes_again_under_its_sequence_number() {
    let (mut a, mut b, d2a1, _, bo) = up_to_data_ack();
    let mut out = Vec::new();
    a.handle_rx(us(5696), &d2a1, &mut out);
    assert!(out.contains(&MacAction::Deliver { msdu: D2, from: B }));
    let (t, o) = fire(&mut a, &out, MacTimer::Response);
    assert_eq!((t, transmitted(&o).kind), (us(5706), FrameKind::Ack));
    a.handle_tx_end(us(6010), &mut Vec::new());

    b.handle_medium_busy(us(5706));
    b.handle_rx_error(us(6010));
    let mut out = bo;
    b.handle_medium_idle(us(6010), &mut out);
    let (t, o) = fire(&mut b, &out, MacTimer::Timeout);
    assert_eq!(t, us(6030));
    let carried = Retries {
        short: 0,
        long: 1,
        seq: Some(d2a1.seq),
    };
    assert!(o.contains(&MacAction::Requeue {
        msdu: D2,
        next_hop: A,
        retries: carried
    }));

    // Back from the queue head at once (the station holds nothing else).
    let mut out = Vec::new();
    b.handle_msdu_with(us(6030), D2, A, carried, &mut out);
    let (t, o) = fire(&mut b, &out, MacTimer::Access);
    assert_eq!(t, us(6374));
    let rts = transmitted(&o);
    assert!(!rts.retry, "the RTS is D2's first (short count 0)");
    b.handle_medium_busy(us(6374));
    b.handle_tx_end(us(6726), &mut Vec::new());

    let mut ao = Vec::new();
    a.handle_rx(us(6726), &rts, &mut ao);
    let (t, o) = fire(&mut a, &ao, MacTimer::Response);
    assert_eq!(t, us(6736));
    let cts = transmitted(&o);
    a.handle_tx_end(us(7056), &mut Vec::new());

    let mut out = Vec::new();
    b.handle_rx(us(7056), &cts, &mut out);
    let (t, o) = fire(&mut b, &out, MacTimer::Response);
    assert_eq!(t, us(7066));
    let data = transmitted(&o);
    assert_eq!((data.msdu, data.seq, data.retry), (Some(D2), d2a1.seq, true));
    assert_eq!(data.airtime(), Duration::from_micros(464));
    let mut bo = Vec::new();
    b.handle_tx_end(us(7530), &mut bo);

    let mut ao = Vec::new();
    a.handle_rx(us(7530), &data, &mut ao);
    assert!(!ao.iter().any(|x| matches!(x, MacAction::Deliver { .. })), "{ao:?}");
    assert_eq!(a.stats.duplicates, 1);
    let (t, o) = fire(&mut a, &ao, MacTimer::Response);
    assert_eq!(t, us(7540));
    let ack = transmitted(&o);
    let mut out = Vec::new();
    b.handle_rx(us(7844), &ack, &mut out);
    assert!(out.contains(&MacAction::TxDone { msdu: D2, next_hop: A }));
}
