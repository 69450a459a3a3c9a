//! Cumulative-interference SINR reception with preamble detection, the
//! abstraction of ns-3 and OMNeT++ (as ns-3 3.44 implements it in
//! `PhyEntity`, `InterferenceHelper`, `ThresholdPreambleDetectionModel` and
//! `SimpleFrameCaptureModel`; this is our own code from that description).
//!
//! - **Noise and interference.** The noise floor is thermal noise over the
//!   22 MHz channel times the noise figure, N = k·T·B·F. Interference is the
//!   sum of the powers of every other signal on the air at this receiver; it
//!   is constant between signal starts and ends, so a frame is judged in
//!   chunks between those instants, each with SINR = P / (N + ΣI).
//! - **Preamble detection.** A signal at or above the receive sensitivity
//!   that arrives while the radio is neither transmitting nor receiving is a
//!   candidate. 4 µs after its start the strongest candidate still on the
//!   air is detected if its SINR then is at least the preamble-detection
//!   threshold; the others are dropped. A candidate that is not the
//!   strongest is dropped at its own detection time.
//! - **Frame success.** The 144 µs PLCP preamble is not judged (detection
//!   stands for it). The 48 µs PLCP header is sent with DBPSK at 1 Mbit/s:
//!   at its end one draw against the product of its chunks' success
//!   probabilities decides whether reception goes on; if not, reception is
//!   abandoned without telling the MAC (no EIFS), and the radio may detect a
//!   new frame. At the frame's end a second draw against the payload's
//!   chunks (at the frame's rate, `error_rate.rs`) decides between a decoded
//!   frame and one received in error (EIFS). A frame whose rate has its own,
//!   shorter decode range fails there below that rate's threshold.
//! - **Locked.** While receiving, new signals are only interference, unless
//!   frame capture is on: a signal stronger than the current frame by the
//!   capture margin, arriving within the capture window after the current
//!   frame's detection, replaces it (ns-3's `SimpleFrameCaptureModel`:
//!   5 dB, 16 µs; off by default, as in ns-3).
//! - **Carrier sense** by energy detection: the medium is busy while the
//!   summed power of every signal on the air reaches the carrier-sense
//!   threshold, or while a frame is being received.
//!
//! Decisions fall due between the signal events this model sees (a
//! detection 4 µs after a start, a header verdict 192 µs after it); each is
//! taken at the next input, with its own time stamp, before that input is
//! applied. Nothing in between depends on it: the medium stays busy by
//! energy throughout.
//!
//! Every signal strong enough to decode alone (at or above the sensitivity
//! and its rate's threshold) that ends without having been decoded is
//! reported once, at its end, as a loss: `Transmitting` if the radio was
//! sending when it arrived or started sending during it, `Interference`
//! otherwise.

use super::{Arrival, Loss, RxEnd, SignalEnd, TxId, POWER_TOLERANCE};
use crate::phy::error_rate::{certain_sinr, ln_chunk_success, CHANNEL_WIDTH_HZ};
use crate::phy::propagation::Thresholds;
use crate::phy::Rate;
use crate::time::{Duration, SimTime};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

/// Boltzmann's constant, J/K.
const BOLTZMANN: f64 = 1.380_649e-23;
/// Reference temperature of thermal noise, K.
const NOISE_TEMPERATURE_K: f64 = 290.0;
/// How long after a signal's start preamble detection decides (ns-3's
/// `WifiPhy::GetPreambleDetectionDuration`).
pub const PREAMBLE_DETECTION: Duration = Duration::from_micros(4);
/// Long PLCP preamble (SYNC + SFD), 144 µs at 1 Mbit/s (IEEE 802.11-2012 §17.2.2.2).
pub const PLCP_PREAMBLE: Duration = Duration::from_micros(144);
/// PLCP header, 48 µs at 1 Mbit/s (§17.2.2.2).
pub const PLCP_HEADER: Duration = Duration::from_micros(48);

/// The SINR model's settings (`[radio.sinr]`, docs/scenario.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SinrConfig {
    /// Receiver noise figure, dB (ns-3's default 7).
    pub noise_figure_db: f64,
    /// Preamble detection needs at least this SINR, dB (ns-3's default 4).
    pub preamble_detection_db: f64,
    /// Frame capture (off by default, as in ns-3).
    pub frame_capture: bool,
    /// A new frame replaces the current one if this much stronger, dB.
    pub capture_margin_db: f64,
    /// ... and it arrives within this long after the current frame's detection.
    pub capture_window: Duration,
}

impl Default for SinrConfig {
    fn default() -> Self {
        SinrConfig {
            noise_figure_db: 7.0,
            preamble_detection_db: 4.0,
            frame_capture: false,
            capture_margin_db: 5.0,
            capture_window: Duration::from_micros(16),
        }
    }
}

impl SinrConfig {
    /// Noise floor in W: k·T·B over the 22 MHz channel times the noise figure
    /// (−93.55 dBm with 7 dB).
    pub fn noise_w(&self) -> f64 {
        BOLTZMANN * NOISE_TEMPERATURE_K * CHANNEL_WIDTH_HZ * db_to_ratio(self.noise_figure_db)
    }
}

/// A level in dB as a power ratio.
pub fn db_to_ratio(db: f64) -> f64 {
    10f64.powf(db / 10.0)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    /// Too weak to decode alone: interference only, never a loss.
    Weak,
    /// Not decoded (yet).
    Pending,
    Lost(Loss),
    Received,
}

#[derive(Clone, Copy, Debug)]
struct Signal {
    tx: TxId,
    power_w: f64,
    fate: Fate,
}

#[derive(Clone, Copy, Debug)]
struct Candidate {
    tx: TxId,
    power_w: f64,
    rate: Rate,
    start: SimTime,
    end: SimTime,
}

impl Candidate {
    fn new(a: &Arrival, now: SimTime) -> Self {
        Candidate {
            tx: a.tx,
            power_w: a.power_w,
            rate: a.rate,
            start: now,
            end: now + a.airtime(),
        }
    }
    fn detect_at(&self) -> SimTime {
        self.start + PREAMBLE_DETECTION
    }
}

/// The frame being received.
#[derive(Clone, Copy, Debug)]
struct Current {
    tx: TxId,
    power_w: f64,
    rate: Rate,
    /// Its payload can decode at all: power at or above its rate's threshold.
    rate_ok: bool,
    detected_at: SimTime,
    header_start: SimTime,
    payload_start: SimTime,
    end: SimTime,
    header_judged: bool,
    /// Chunks are accounted up to here.
    last: SimTime,
    ln_header: f64,
    ln_payload: f64,
}

/// One radio's SINR receiver: the signals on the air here, the preamble
/// candidates and the frame being received.
#[derive(Clone, Debug)]
pub struct SinrRx {
    noise_w: f64,
    sensitivity_w: f64,
    rx_w: [f64; 4],
    cs_w: f64,
    preamble_sinr: f64,
    capture: Option<(f64, Duration)>,
    /// Per rate, the SINR above which chunks cannot fail (`certain_sinr`).
    certain: [f64; 4],
    rng: Pcg64Mcg,
    signals: Vec<Signal>,
    /// Summed power of `signals` (recomputed exactly whenever one ends).
    total_w: f64,
    candidates: Vec<Candidate>,
    rx: Option<Current>,
    /// Every chunk judged, as (from, to, SINR), for tests.
    #[cfg(test)]
    chunks: Vec<(SimTime, SimTime, f64)>,
}

impl SinrRx {
    /// The receive sensitivity is the threshold of the rate that reaches
    /// farthest (the PLCP preamble and header go at 1 Mbit/s), so that a
    /// lone frame is detected exactly up to its range.
    pub fn new(th: &Thresholds, cfg: &SinrConfig, rng: Pcg64Mcg) -> Self {
        let tol = 1.0 - POWER_TOLERANCE;
        SinrRx {
            noise_w: cfg.noise_w(),
            sensitivity_w: th.rx_w_by_rate.iter().copied().fold(f64::INFINITY, f64::min) * tol,
            rx_w: th.rx_w_by_rate.map(|w| w * tol),
            cs_w: th.cs_w * tol,
            preamble_sinr: db_to_ratio(cfg.preamble_detection_db),
            capture: cfg
                .frame_capture
                .then(|| (db_to_ratio(cfg.capture_margin_db), cfg.capture_window)),
            certain: *certain_sinr(),
            rng,
            signals: Vec::with_capacity(8),
            total_w: 0.0,
            candidates: Vec::with_capacity(2),
            rx: None,
            #[cfg(test)]
            chunks: Vec::new(),
        }
    }

    /// Whether a frame's preamble was detected and its end not yet reached.
    pub fn is_receiving(&self) -> bool {
        self.rx.is_some()
    }

    /// Energy-detection carrier sense: the summed power on the air reaches
    /// the carrier-sense threshold (IEEE 802.11-2012 §9.3.2.1, physical CS).
    pub fn is_medium_busy(&self) -> bool {
        self.total_w >= self.cs_w
    }

    /// SINR of a signal on the air of `power_w`: over the noise and the
    /// summed power of every other signal.
    fn sinr(&self, power_w: f64) -> f64 {
        power_w / (self.noise_w + (self.total_w - power_w).max(0.0))
    }

    fn set_fate(&mut self, tx: TxId, fate: Fate) {
        if let Some(s) = self.signals.iter_mut().find(|s| s.tx == tx) {
            if s.fate != Fate::Weak {
                s.fate = fate;
            }
        }
    }

    /// Adds the chunks of the current frame from where its accounting
    /// stands to `t`, under the interference on the air now.
    fn accumulate(&mut self, t: SimTime) {
        let Some(cur) = self.rx else { return };
        if t <= cur.last {
            return;
        }
        let sinr = self.sinr(cur.power_w);
        #[cfg(test)]
        if t > cur.last.max(cur.header_start) {
            self.chunks.push((cur.last.max(cur.header_start), t, sinr));
        }
        let overlap = |a: SimTime, b: SimTime| -> f64 {
            let lo = a.max(cur.last);
            let hi = b.min(t);
            if hi > lo {
                (hi - lo).as_secs_f64()
            } else {
                0.0
            }
        };
        let header_s = overlap(cur.header_start, cur.payload_start);
        let payload_s = overlap(cur.payload_start, cur.end);
        let (header_certain, payload_certain) = (
            sinr >= self.certain[Rate::MBPS_1.index()],
            sinr >= self.certain[cur.rate.index()],
        );
        let cur = self.rx.as_mut().expect("checked");
        if header_s > 0.0 && !header_certain {
            cur.ln_header += ln_chunk_success(Rate::MBPS_1, sinr, header_s * 1e6);
        }
        if payload_s > 0.0 && !payload_certain {
            cur.ln_payload += ln_chunk_success(cur.rate, sinr, payload_s * cur.rate.mbps() * 1e6);
        }
        cur.last = t;
    }

    /// Takes the next decision due at or before `now` (a preamble
    /// detection or a header verdict) and returns its time.
    pub fn advance(&mut self, now: SimTime) -> Option<SimTime> {
        if let Some(cur) = self.rx {
            let at = cur.payload_start;
            if !cur.header_judged && at <= now {
                self.accumulate(at);
                let cur = self.rx.as_mut().expect("receiving");
                cur.header_judged = true;
                let per = -cur.ln_header.exp_m1();
                let tx = cur.tx;
                // Drawn only when the header can fail.
                if per > 0.0 && self.rng.gen::<f64>() < per {
                    // PLCP header lost: reception abandoned (ns-3 aborts
                    // without RX-end error), the radio may detect anew.
                    self.rx = None;
                    self.set_fate(tx, Fate::Lost(Loss::Interference));
                }
                return Some(at);
            }
            return None;
        }
        // Candidates are kept in arrival order, so the first is due first.
        let c = *self.candidates.first()?;
        let at = c.detect_at();
        if at > now {
            return None;
        }
        let strongest = self.candidates.iter().all(|o| o.power_w <= c.power_w);
        if strongest && self.sinr(c.power_w) >= self.preamble_sinr {
            self.candidates.clear();
            let header_start = c.start + PLCP_PREAMBLE;
            self.rx = Some(Current {
                tx: c.tx,
                power_w: c.power_w,
                rate: c.rate,
                rate_ok: c.power_w >= self.rx_w[c.rate.index()],
                detected_at: at,
                header_start,
                payload_start: header_start + PLCP_HEADER,
                end: c.end,
                header_judged: false,
                last: at,
                ln_header: 0.0,
                ln_payload: 0.0,
            });
        } else {
            self.candidates.remove(0);
        }
        Some(at)
    }

    /// The radio starts transmitting: the frame being received and the
    /// candidates are lost (reported at their ends).
    pub fn start_tx(&mut self) {
        if let Some(cur) = self.rx.take() {
            self.set_fate(cur.tx, Fate::Lost(Loss::Transmitting));
        }
        for c in std::mem::take(&mut self.candidates) {
            self.set_fate(c.tx, Fate::Lost(Loss::Transmitting));
        }
    }

    /// A signal starts arriving: it adds to the interference, may become a
    /// preamble candidate, or captures the current frame. Losses are
    /// reported at the signal's end, not here.
    pub fn signal_start(&mut self, now: SimTime, a: Arrival, transmitting: bool) {
        self.accumulate(now);
        let decodable = a.power_w >= self.sensitivity_w && a.power_w >= self.rx_w[a.rate.index()];
        let mut fate = if decodable { Fate::Pending } else { Fate::Weak };
        let detectable = a.power_w >= self.sensitivity_w;
        if transmitting {
            if decodable {
                fate = Fate::Lost(Loss::Transmitting);
            }
        } else if let Some(cur) = self.rx {
            let captured = self.capture.is_some_and(|(margin, window)| {
                detectable && now <= cur.detected_at + window && a.power_w > cur.power_w * margin
            });
            if captured {
                self.rx = None;
                self.set_fate(cur.tx, Fate::Lost(Loss::Interference));
                self.candidates.push(Candidate::new(&a, now));
            } else if decodable {
                fate = Fate::Lost(Loss::Interference);
            }
        } else if detectable {
            self.candidates.push(Candidate::new(&a, now));
        }
        self.signals.push(Signal {
            tx: a.tx,
            power_w: a.power_w,
            fate,
        });
        self.total_w += a.power_w;
    }

    /// A signal leaves the air: the frame being received gets its payload
    /// verdict, and a decodable frame never decoded is reported lost.
    pub fn signal_end(&mut self, now: SimTime, tx: TxId, transmitting: bool) -> SignalEnd {
        self.accumulate(now);
        let mut out = SignalEnd::default();
        if self.rx.is_some_and(|c| c.tx == tx) {
            let cur = self.rx.take().expect("checked");
            let per = -cur.ln_payload.exp_m1();
            let ok = cur.rate_ok && (per == 0.0 || self.rng.gen::<f64>() >= per);
            self.set_fate(
                tx,
                if ok {
                    Fate::Received
                } else {
                    Fate::Lost(Loss::Interference)
                },
            );
            out.rx = Some(if ok { RxEnd::Ok(tx) } else { RxEnd::Error(tx) });
        }
        self.candidates.retain(|c| c.tx != tx);
        let Some(i) = self.signals.iter().position(|s| s.tx == tx) else {
            return out;
        };
        let s = self.signals.swap_remove(i);
        self.total_w = self.signals.iter().map(|s| s.power_w).sum();
        out.lost = match s.fate {
            Fate::Lost(why) => Some((tx, why)),
            Fate::Pending => Some((tx, Loss::Interference)),
            Fate::Weak | Fate::Received => None,
        };
        // Heard but not decoded, arrived and ended while not sending: the
        // MAC's EIFS-after-sensed rule (`mac.eifs_after_sensed`) applies.
        let heard = s.power_w >= self.cs_w && s.fate != Fate::Lost(Loss::Transmitting);
        if out.rx.is_none() && heard && !transmitting && self.rx.is_none() {
            out.rx = Some(RxEnd::Sensed(tx));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::radio::{Radio, RadioState};
    use crate::phy::reception::Reception;

    const NOISE: f64 = 1e-13;

    /// Thresholds with the sensitivity at 10·N and carrier sense at 2·N; a
    /// noise figure chosen so that N = 1e-13 W.
    fn config() -> (Thresholds, SinrConfig) {
        let th = Thresholds {
            rx_w: 10.0 * NOISE,
            rx_w_by_rate: [10.0 * NOISE; 4],
            cs_w: 2.0 * NOISE,
            capture_ratio: 10.0,
        };
        let unit = SinrConfig {
            noise_figure_db: 0.0,
            ..SinrConfig::default()
        };
        let cfg = SinrConfig {
            noise_figure_db: 10.0 * (NOISE / unit.noise_w()).log10(),
            ..SinrConfig::default()
        };
        (th, cfg)
    }
    fn radio_with(cfg: SinrConfig, seed: u64) -> Radio {
        let (th, _) = config();
        let rng = crate::engine::stream(seed, 0, crate::engine::Purpose::Reception);
        Radio::new(Reception::Sinr(Box::new(SinrRx::new(&th, &cfg, rng))))
    }
    fn radio() -> Radio {
        radio_with(config().1, 1)
    }
    fn t(us: u64) -> SimTime {
        SimTime(us * 1000)
    }
    /// A 1000-byte frame at 2 Mbit/s (192 + 4000 µs) at `n` times the noise.
    fn frame(tx: TxId, n: f64) -> Arrival {
        Arrival {
            tx,
            power_w: n * NOISE,
            rate: Rate::MBPS_2,
            bytes: 1000,
        }
    }
    fn chunks(r: &Radio) -> Vec<(u64, u64, f64)> {
        let Reception::Sinr(m) = r.reception() else {
            unreachable!()
        };
        m.chunks
            .iter()
            .map(|&(a, b, s)| (a.as_nanos() / 1000, b.as_nanos() / 1000, s))
            .collect()
    }

    #[test]
    fn noise_floor_is_thermal_noise_over_22_mhz_plus_the_noise_figure() {
        // k·T = −173.98 dBm/Hz at 290 K; + 10·log10(22e6) + 7 dB = −93.55 dBm.
        let dbm = 10.0 * (SinrConfig::default().noise_w() / 1e-3).log10();
        assert!((dbm + 93.55).abs() < 0.01, "{dbm}");
        assert!((10.0 * (config().1.noise_w() / NOISE).log10()).abs() < 1e-9);
    }

    #[test]
    fn two_overlapping_interferers_give_five_chunks() {
        // Frame 1 from 0 to 4192 µs at 100 N; interferer 2 (8 N, below the
        // sensitivity) from 500 to 2500 µs, interferer 3 (30 N) from 1500
        // to 3500 µs. The preamble is not judged; the header is one chunk
        // (judged at its end), the payload five.
        //
        //  1: |pre 144|hdr 48|------------------ payload ------------------|
        //     0      144    192      500      1500      2500      3500    4192
        //  2:                         |======= 8 N ======|
        //  3:                                   |====== 30 N ======|
        let mut r = radio();
        r.signal_start(t(0), frame(1, 100.0));
        r.signal_start(t(500), frame(2, 8.0));
        r.signal_start(t(1500), frame(3, 30.0));
        r.signal_end(t(2500), 2);
        r.signal_end(t(3500), 3);
        let end = r.signal_end(t(4192), 1);
        let want = [
            (144, 192, 100.0),
            (192, 500, 100.0),
            (500, 1500, 100.0 / 9.0),
            (1500, 2500, 100.0 / 39.0),
            (2500, 3500, 100.0 / 31.0),
            (3500, 4192, 100.0),
        ];
        let c = chunks(&r);
        assert_eq!(c.len(), want.len(), "{c:?}");
        for (got, want) in c.iter().zip(want) {
            assert_eq!((got.0, got.1), (want.0, want.1));
            assert!((got.2 - want.2).abs() < 1e-9 * want.2, "{got:?} vs {want:?}");
        }
        // 1000 µs at 100/39 (4.1 dB) costs DQPSK about 1e-5 of success.
        assert_eq!(end.rx, Some(RxEnd::Ok(1)));
        assert_eq!(end.lost, None);
    }

    #[test]
    fn preamble_detection_edge() {
        // Alone at the sensitivity (10 N, SINR 10 dB): detected and decoded.
        let mut r = radio();
        r.signal_start(t(0), frame(1, 10.0));
        r.signal_start(t(10), frame(9, 0.5)); // decisions due at 4 µs are taken first
        assert_eq!(r.state(), RadioState::Receiving);
        r.signal_end(t(11), 9);
        assert_eq!(r.signal_end(t(4192), 1).rx, Some(RxEnd::Ok(1)));
        // Just below the sensitivity: only sensed.
        let mut r = radio();
        r.signal_start(t(0), frame(1, 9.99));
        assert_eq!(r.signal_end(t(4192), 1).rx, Some(RxEnd::Sensed(1)));
        assert_eq!(r.time_in(RadioState::Receiving, t(5000)), Duration::ZERO);
        // SINR at the detection instant against the 4 dB threshold (2.512):
        // 100 N over N + 38.8 N is 2.577 (detected); over N + 40 N, 2.439 (not).
        // The interferer arrives first but is weaker: dropped at its own
        // detection instant, 4 µs, before frame 1's at 6 µs.
        for (interferer, detected) in [(38.8, true), (40.0, false)] {
            let mut r = radio();
            r.signal_start(t(0), frame(7, interferer));
            r.signal_start(t(2), frame(1, 100.0));
            let lost = r.signal_end(t(4000), 7).lost;
            assert_eq!(lost, Some((7, Loss::Interference)));
            assert_eq!(r.state() == RadioState::Receiving, detected, "{interferer}");
            let end = r.signal_end(t(4194), 1);
            assert_eq!(matches!(end.rx, Some(RxEnd::Ok(1) | RxEnd::Error(1))), detected);
            assert_eq!(end.lost.is_some(), !detected || end.rx == Some(RxEnd::Error(1)));
        }
    }

    #[test]
    fn with_the_default_ranges_a_lone_frame_decodes_at_250_m_not_251_and_is_sensed_to_550_m() {
        // Thresholds as a scenario derives them (two-ray ground, 250 m and
        // 550 m), default noise: at 250 m the SNR is 29 dB, so detection
        // and decoding hinge on the sensitivity alone.
        use crate::phy::propagation::TwoRayGround;
        let model = TwoRayGround::default();
        let th = Thresholds::from_ranges(&model, 250.0, 550.0, 10.0);
        let cfg = SinrConfig::default();
        let at = |d: f64| Arrival {
            tx: 1,
            power_w: model.rx_power_w(d),
            rate: Rate::MBPS_2,
            bytes: 1000,
        };
        let radio = || {
            let rng = crate::engine::stream(1, 0, crate::engine::Purpose::Reception);
            Radio::new(Reception::Sinr(Box::new(SinrRx::new(&th, &cfg, rng))))
        };
        let mut r = radio();
        r.signal_start(t(0), at(250.0));
        assert_eq!(r.signal_end(t(4192), 1).rx, Some(RxEnd::Ok(1)));
        for (d, sensed) in [(251.0, true), (550.0, true), (551.0, false)] {
            let mut r = radio();
            r.signal_start(t(0), at(d));
            assert_eq!(r.is_busy(), sensed, "{d} m");
            let end = r.signal_end(t(4192), 1);
            assert_eq!(end.rx, sensed.then_some(RxEnd::Sensed(1)), "{d} m");
            assert_eq!(r.time_in(RadioState::Receiving, t(5000)), Duration::ZERO);
        }
    }

    #[test]
    fn the_strongest_preamble_within_the_detection_window_wins() {
        // A weaker frame arrives first; a 20 dB stronger one 1 µs later,
        // inside the 4 µs window: the stronger one is received.
        let mut r = radio();
        r.signal_start(t(0), frame(1, 10.0));
        r.signal_start(t(1), frame(2, 1000.0));
        assert_eq!(r.signal_end(t(4192), 1).lost, Some((1, Loss::Interference)));
        assert_eq!(r.signal_end(t(4193), 2).rx, Some(RxEnd::Ok(2)));
        // 10 µs later, past the window: the first is locked, the second lost.
        let mut r = radio();
        r.signal_start(t(0), frame(1, 10.0));
        assert!(r.signal_start(t(10), frame(2, 1000.0)).is_empty());
        // Frame 1's header fails under 30 dB of interference: heard, not
        // decoded (EIFS only where `mac.eifs_after_sensed` asks for it).
        let first = r.signal_end(t(4192), 1);
        assert_eq!(first.rx, Some(RxEnd::Sensed(1)));
        assert_eq!(first.lost, Some((1, Loss::Interference)));
        assert_eq!(r.signal_end(t(4202), 2).lost, Some((2, Loss::Interference)));
    }

    #[test]
    fn a_lost_plcp_header_abandons_reception_without_an_error_and_frees_the_radio() {
        // An interferer 50 times stronger covers the whole PLCP header:
        // DBPSK at SINR 0.02 loses about 30 % of the bits.
        let mut r = radio();
        r.signal_start(t(0), frame(1, 100.0));
        r.signal_start(t(100), frame(8, 5000.0));
        r.signal_end(t(200), 8);
        // The header verdict (due at 192 µs) was taken at this input: the
        // radio is no longer receiving and detects the next frame.
        assert_eq!(r.state(), RadioState::CarrierSense);
        r.signal_start(t(300), frame(2, 10_000.0));
        let first = r.signal_end(t(4192), 1);
        assert_eq!(first.lost, Some((1, Loss::Interference)));
        assert_eq!(first.rx, None); // receiving frame 2: no EIFS report
        assert_eq!(r.signal_end(t(4492), 2).rx, Some(RxEnd::Ok(2)));
    }

    #[test]
    fn frame_capture_switches_to_a_stronger_frame_within_its_window() {
        let on = SinrConfig {
            frame_capture: true,
            ..config().1
        };
        let mut r = radio_with(on, 1);
        r.signal_start(t(0), frame(1, 100.0));
        // Detected at 4 µs; a 10 dB stronger frame at 15 µs is within 16 µs.
        r.signal_start(t(15), frame(2, 1000.0));
        assert_eq!(r.signal_end(t(4192), 1).lost, Some((1, Loss::Interference)));
        assert_eq!(r.signal_end(t(4207), 2).rx, Some(RxEnd::Ok(2)));
        // At 25 µs it is too late; without capture it is too late always.
        for (cfg, at) in [(on, 25), (config().1, 15)] {
            let mut r = radio_with(cfg, 1);
            r.signal_start(t(0), frame(1, 100.0));
            r.signal_start(t(at), frame(2, 1000.0));
            assert_eq!(r.signal_end(t(4192), 1).lost, Some((1, Loss::Interference)));
            assert_eq!(r.signal_end(t(4192 + at), 2).lost, Some((2, Loss::Interference)));
        }
    }

    #[test]
    fn carrier_sense_by_energy_sums_every_signal() {
        // Two signals of 1.2 N each: neither reaches 2 N, together they do.
        let mut r = radio();
        r.signal_start(t(0), frame(1, 1.2));
        assert!(!r.is_busy());
        r.signal_start(t(1), frame(2, 1.2));
        assert!(r.is_busy());
        assert_eq!(r.state(), RadioState::CarrierSense);
        r.signal_end(t(4192), 1);
        assert!(!r.is_busy());
    }

    #[test]
    fn payload_success_is_drawn_with_the_chunk_probability() {
        // A constant interferer (9 N, below the sensitivity) puts the
        // payload near 50 % PER; over many frames the decoded fraction
        // matches 1 − PER within 4 σ. Detection at 0 dB lets them start.
        let sinr = 10f64.powf(0.05); // 0.5 dB
        let psr = ln_chunk_success(Rate::MBPS_2, sinr, 8000.0).exp();
        assert!((0.2..0.8).contains(&psr), "{psr}");
        let cfg = SinrConfig {
            preamble_detection_db: 0.0,
            ..config().1
        };
        let mut r = radio_with(cfg, 1);
        let n = 2000;
        let mut ok = 0;
        r.signal_start(t(0), frame(99, 9.0));
        for i in 0..n {
            let t0 = 10 + i * 5000;
            r.signal_start(t(t0), frame(1, sinr * 10.0));
            if r.signal_end(t(t0 + 4192), 1).rx == Some(RxEnd::Ok(1)) {
                ok += 1;
            }
        }
        let sd = (psr * (1.0 - psr) / n as f64).sqrt();
        let got = ok as f64 / n as f64;
        assert!((got - psr).abs() < 4.0 * sd, "{got} vs {psr}");
    }

    #[test]
    fn half_duplex_losses_are_reported_at_the_frame_end() {
        let mut r = radio();
        r.signal_start(t(0), frame(1, 100.0));
        assert_eq!(r.start_tx(t(50)), None);
        r.signal_start(t(60), frame(2, 100.0));
        r.end_tx(t(400));
        assert_eq!(r.signal_end(t(4192), 1).lost, Some((1, Loss::Transmitting)));
        let end = r.signal_end(t(4252), 2);
        assert_eq!(end.lost, Some((2, Loss::Transmitting)));
        assert_eq!(end.rx, None);
    }
}
