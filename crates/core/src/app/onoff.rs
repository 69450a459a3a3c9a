//! An HTTP-like on/off source over one TCP connection: pages of objects
//! whose sizes are heavy-tailed, separated by a user's think time. The NRED
//! paper (Xu et al. 2003, §6.1, Fig. 7) swaps its FTP flows for HTTP flows
//! so that queues are short and change often; it gives no parameters, so
//! the defaults here are documented choices (`docs/tcp.md`).
//!
//! Closed loop, as a browser on a persistent connection: an object is
//! requested when the previous one has been fully received; the first
//! object of a page waits a think time after the last object of the
//! previous page. The engine calls [`OnOffSource::handle_object_complete`]
//! when the sender has every byte acknowledged, then pushes the bytes of
//! the next [`Request`] into the TCP sender at its time.

use rand::Rng;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use crate::time::{Duration, SimTime};

/// The scenario's `[onoff]` table.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct OnOffConfig {
    /// Mean object (reply) size in bytes before truncation; Pareto.
    pub object_size_mean_bytes: f64,
    /// Pareto shape (tail index) of object sizes; > 1 for a finite mean.
    pub object_size_shape: f64,
    /// Largest object, bytes: the Pareto draw is truncated here so that one
    /// draw cannot outlast a run.
    pub object_size_max_bytes: u64,
    /// Mean number of objects per page (geometric, at least 1).
    pub objects_per_page_mean: f64,
    /// Mean think time between pages, seconds (exponential).
    pub think_time_mean_s: f64,
}

impl Default for OnOffConfig {
    fn default() -> Self {
        OnOffConfig {
            object_size_mean_bytes: 12_000.0,
            object_size_shape: 1.2,
            object_size_max_bytes: 2_000_000,
            objects_per_page_mean: 3.0,
            think_time_mean_s: 2.0,
        }
    }
}

impl OnOffConfig {
    /// Checks every key; the message names the key, its value and what is
    /// allowed.
    pub fn validate(&self) -> Result<(), String> {
        let m = self.object_size_mean_bytes;
        if !m.is_finite() || !(1.0..=1e12).contains(&m) {
            return Err(format!(
                "onoff.object_size_mean_bytes = {m}: must be a number of bytes in 1..=1e12"
            ));
        }
        let a = self.object_size_shape;
        if !a.is_finite() || a <= 1.0 || a > 100.0 {
            return Err(format!(
                "onoff.object_size_shape = {a}: must be a number > 1 and <= 100 (a Pareto tail index with a finite mean)"
            ));
        }
        let x_m = self.pareto_scale();
        if (self.object_size_max_bytes as f64) < x_m.ceil() {
            return Err(format!(
                "onoff.object_size_max_bytes = {}: must be >= the Pareto scale {} implied by the mean and shape",
                self.object_size_max_bytes,
                x_m.ceil()
            ));
        }
        let k = self.objects_per_page_mean;
        if !k.is_finite() || !(1.0..=1e6).contains(&k) {
            return Err(format!(
                "onoff.objects_per_page_mean = {k}: must be a number in 1..=1e6"
            ));
        }
        // Through the one time validator: a mean that rounds to 0 ns is refused.
        crate::time::Span::NON_NEGATIVE
            .at_most(crate::time::Duration::from_secs_f64(86_400.0))
            .check(
                "onoff.think_time_mean_s",
                self.think_time_mean_s,
                crate::time::Unit::Seconds,
            )?;
        Ok(())
    }

    /// Pareto scale x_m for the configured mean: mean = alpha x_m / (alpha - 1).
    fn pareto_scale(&self) -> f64 {
        self.object_size_mean_bytes * (self.object_size_shape - 1.0) / self.object_size_shape
    }
}

/// One object to transfer: push `bytes` into the TCP sender at `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// When the request is made: now, or after a think time.
    pub at: SimTime,
    /// Object size drawn from the truncated Pareto.
    pub bytes: u64,
    /// First object of a page (it followed a think time).
    pub page_start: bool,
}

/// Counters of one source.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OnOffStats {
    /// Pages started.
    pub pages: u64,
    /// Objects requested.
    pub objects: u64,
    /// Bytes requested, summed over the objects.
    pub bytes: u64,
}

/// The generator. It owns its random stream (`Purpose::Traffic` of the
/// flow's source node), so its draws never shift another component's.
#[derive(Clone, Debug)]
pub struct OnOffSource {
    cfg: OnOffConfig,
    rng: Pcg64Mcg,
    /// Objects of the current page still to request.
    left_in_page: u64,
    next: Option<Request>,
    stats: OnOffStats,
}

impl OnOffSource {
    /// A source whose first page starts at `start`.
    pub fn new(cfg: &OnOffConfig, rng: Pcg64Mcg, start: SimTime) -> Self {
        let mut s = OnOffSource {
            cfg: cfg.clone(),
            rng,
            left_in_page: 0,
            next: None,
            stats: OnOffStats::default(),
        };
        s.next = Some(s.draw_next(start, true));
        s
    }

    /// Uniform in (0, 1]: never 0, so logarithms and powers stay finite.
    fn unit(&mut self) -> f64 {
        1.0 - self.rng.gen::<f64>()
    }

    /// Pareto (type I) object size, truncated at the maximum.
    pub fn draw_object_bytes(&mut self) -> u64 {
        let x_m = self.cfg.pareto_scale();
        let x = x_m / self.unit().powf(1.0 / self.cfg.object_size_shape);
        (x.round() as u64).clamp(1, self.cfg.object_size_max_bytes.max(1))
    }

    /// Objects in a page: 1 + geometric, with the configured mean.
    pub fn draw_objects_per_page(&mut self) -> u64 {
        let m = self.cfg.objects_per_page_mean;
        if m <= 1.0 {
            return 1;
        }
        let q = 1.0 - 1.0 / m; // probability of one more object
        1 + (self.unit().ln() / q.ln()).floor() as u64
    }

    /// Exponential think time.
    pub fn draw_think_time(&mut self) -> Duration {
        Duration::from_secs_f64(-self.cfg.think_time_mean_s * self.unit().ln())
    }

    /// The request that follows a completion (or the start) at `now`.
    fn draw_next(&mut self, now: SimTime, first: bool) -> Request {
        let (at, page_start) = if self.left_in_page == 0 {
            self.left_in_page = self.draw_objects_per_page();
            self.stats.pages += 1;
            let at = if first { now } else { now + self.draw_think_time() };
            (at, true)
        } else {
            (now, false)
        };
        self.left_in_page -= 1;
        let bytes = self.draw_object_bytes();
        self.stats.objects += 1;
        self.stats.bytes += bytes;
        Request { at, bytes, page_start }
    }

    /// The pending request if its time has come; then the source waits for
    /// [`Self::handle_object_complete`].
    pub fn poll_request(&mut self, now: SimTime) -> Option<Request> {
        match self.next {
            Some(r) if r.at <= now => self.next.take(),
            _ => None,
        }
    }

    /// When the pending request is due.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.next.map(|r| r.at)
    }

    /// The object last requested has been fully transferred at `now`:
    /// schedule the next one (same page at once, else after a think time).
    /// Ignored while a request is still pending.
    pub fn handle_object_complete(&mut self, now: SimTime) {
        if self.next.is_none() {
            self.next = Some(self.draw_next(now, false));
        }
    }

    /// What the source has requested so far.
    pub fn stats(&self) -> &OnOffStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, Purpose};

    fn source(cfg: &OnOffConfig, seed: u64) -> OnOffSource {
        OnOffSource::new(cfg, stream(seed, 0, Purpose::Traffic), SimTime::ZERO)
    }

    #[test]
    fn first_request_is_at_start_then_waits_for_completion() {
        let cfg = OnOffConfig {
            objects_per_page_mean: 1.0,
            ..OnOffConfig::default()
        };
        let mut s = OnOffSource::new(&cfg, stream(1, 0, Purpose::Traffic), SimTime(5));
        assert_eq!(s.poll_timeout(), Some(SimTime(5)));
        assert_eq!(s.poll_request(SimTime(4)), None);
        let r = s.poll_request(SimTime(5)).unwrap();
        assert!(r.page_start && r.bytes >= 1);
        // Nothing more until the object is complete.
        assert_eq!(s.poll_request(SimTime(10)), None);
        assert_eq!(s.poll_timeout(), None);
        s.handle_object_complete(SimTime(100));
        // One object per page: every request follows a think time.
        let at = s.poll_timeout().unwrap();
        assert!(at > SimTime(100));
        assert_eq!(s.poll_request(SimTime(100)), None);
        assert!(s.poll_request(at).unwrap().page_start);
        assert_eq!(s.stats().pages, 2);
    }

    #[test]
    fn objects_of_a_page_follow_at_once() {
        let cfg = OnOffConfig {
            objects_per_page_mean: 5.0,
            ..OnOffConfig::default()
        };
        let mut s = source(&cfg, 2);
        let mut now = SimTime::ZERO;
        let (mut starts, n) = (0u64, 20_000u64);
        for _ in 0..n {
            let at = s.poll_timeout().unwrap();
            let r = s.poll_request(at).unwrap();
            if r.page_start {
                starts += 1;
            } else {
                assert_eq!(at, now, "an object within a page waits for nothing");
            }
            now = at + Duration::from_millis(50);
            s.handle_object_complete(now);
        }
        let per_page = n as f64 / starts as f64;
        assert!((per_page / 5.0 - 1.0).abs() < 0.05, "objects per page {per_page}");
    }

    /// The source over a real TCP pair on a fixed-delay path: objects go
    /// one after another, pages are separated by think times, and the
    /// receiver gets exactly the bytes requested.
    #[test]
    fn drives_a_tcp_connection_in_closed_loop() {
        use crate::transport::tcp::{TcpConfig, TcpReceiver, TcpSender, TcpVariant};
        use std::collections::BTreeMap;

        let tcfg = TcpConfig::default();
        let mut tx = TcpSender::new(&tcfg, TcpVariant::NewReno, 512, SimTime::ZERO);
        let mut rx = TcpReceiver::new(&tcfg, SimTime::ZERO);
        let cfg = OnOffConfig {
            think_time_mean_s: 1.0,
            ..OnOffConfig::default()
        };
        let mut src = source(&cfg, 9);
        let one_way = Duration::from_millis(20);
        let end = SimTime::from_secs_f64(60.0);
        // (time, tie-break) -> (to receiver?, segment)
        let mut wire = BTreeMap::new();
        let (mut now, mut n, mut delivered) = (SimTime::ZERO, 0u64, 0u64);
        let (mut requested, mut busy, mut completed) = (0u64, false, 0u64);
        let mut page_gaps = Vec::new();
        loop {
            if let Some(r) = src.poll_request(now) {
                assert!(!busy, "a request while an object is in transfer");
                tx.push_app_bytes(now, r.bytes);
                requested += r.bytes;
                busy = true;
            }
            while let Some(s) = tx.poll_transmit(now) {
                n += 1;
                wire.insert((now + one_way, n), (true, s));
            }
            while let Some(a) = rx.poll_transmit(now) {
                n += 1;
                wire.insert((now + one_way, n), (false, a));
            }
            let next = [
                wire.keys().next().map(|k: &(SimTime, u64)| k.0),
                tx.poll_timeout(),
                rx.poll_timeout(),
                src.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(t) = next.filter(|&t| t <= end) else {
                break;
            };
            now = now.max(t);
            if let Some(e) = wire.first_entry().filter(|e| e.key().0 <= now) {
                let (to_rx, seg) = e.remove();
                if to_rx {
                    delivered += rx.handle_segment(now, &seg);
                } else {
                    tx.handle_ack(now, &seg);
                    if busy && tx.all_acked() {
                        busy = false;
                        completed += 1;
                        src.handle_object_complete(now);
                        let at = src.poll_timeout().unwrap();
                        if at > now {
                            page_gaps.push(at - now);
                        }
                    }
                }
                continue;
            }
            tx.handle_timeout(now);
            rx.handle_timeout(now);
        }
        assert!(completed >= 20, "objects completed: {completed}");
        assert!(src.stats().pages >= 5 && src.stats().pages < src.stats().objects);
        assert_eq!(page_gaps.len() as u64 + 1, src.stats().pages);
        assert_eq!(rx.stats().duplicate_segments, 0);
        // Everything requested arrived, except what is still in transfer.
        assert!(delivered <= requested);
        if !busy {
            assert_eq!(delivered, requested);
        }
    }

    #[test]
    fn same_seed_same_requests() {
        let cfg = OnOffConfig::default();
        let run = |seed| {
            let mut s = source(&cfg, seed);
            let mut now = SimTime::ZERO;
            let mut out = Vec::new();
            for _ in 0..50 {
                let at = s.poll_timeout().unwrap();
                out.push(s.poll_request(at).unwrap());
                now = at.max(now) + Duration::from_millis(30);
                s.handle_object_complete(now);
            }
            out
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn sample_means_match_the_configuration() {
        let cfg = OnOffConfig {
            object_size_mean_bytes: 10_000.0,
            object_size_shape: 2.5, // light enough tail for a stable mean
            object_size_max_bytes: u64::MAX,
            objects_per_page_mean: 4.0,
            think_time_mean_s: 3.0,
        };
        let mut s = source(&cfg, 3);
        let n = 200_000;
        let sizes: Vec<u64> = (0..n).map(|_| s.draw_object_bytes()).collect();
        let mean = sizes.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean / 10_000.0 - 1.0).abs() < 0.03, "size mean {mean}");
        assert!(*sizes.iter().min().unwrap() >= 6_000, "Pareto scale is 6000");
        let pages: f64 = (0..n).map(|_| s.draw_objects_per_page() as f64).sum::<f64>() / n as f64;
        assert!((pages / 4.0 - 1.0).abs() < 0.02, "objects per page {pages}");
        let think: f64 = (0..n).map(|_| s.draw_think_time().as_secs_f64()).sum::<f64>() / n as f64;
        assert!((think / 3.0 - 1.0).abs() < 0.02, "think mean {think}");
    }

    #[test]
    fn truncation_caps_object_sizes() {
        let cfg = OnOffConfig {
            object_size_max_bytes: 20_000,
            ..OnOffConfig::default()
        };
        let mut s = source(&cfg, 4);
        let sizes: Vec<u64> = (0..20_000).map(|_| s.draw_object_bytes()).collect();
        assert!(sizes.iter().all(|&b| (1..=20_000).contains(&b)));
        assert!(sizes.contains(&20_000), "the heavy tail reaches the cap");
    }

    #[test]
    fn validation_names_key_value_and_range() {
        assert_eq!(OnOffConfig::default().validate(), Ok(()));
        let bad = OnOffConfig {
            object_size_shape: 1.0,
            ..OnOffConfig::default()
        };
        let e = bad.validate().unwrap_err();
        assert!(e.starts_with("onoff.object_size_shape = 1:"), "{e}");
        assert!(e.contains("> 1"), "{e}");
        let bad = OnOffConfig {
            objects_per_page_mean: 0.5,
            ..OnOffConfig::default()
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .starts_with("onoff.objects_per_page_mean = 0.5:"));
        let bad = OnOffConfig {
            think_time_mean_s: f64::NAN,
            ..OnOffConfig::default()
        };
        assert!(bad.validate().unwrap_err().contains("think_time_mean_s"));
        let bad = OnOffConfig {
            object_size_max_bytes: 10,
            ..OnOffConfig::default()
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .starts_with("onoff.object_size_max_bytes = 10:"));
    }

    #[test]
    fn toml_table_parses_and_rejects_unknown_keys() {
        let c: OnOffConfig = toml::from_str("think_time_mean_s = 5.0").unwrap();
        assert_eq!(c.think_time_mean_s, 5.0);
        assert_eq!(c.object_size_shape, OnOffConfig::default().object_size_shape);
        assert!(toml::from_str::<OnOffConfig>("think_s = 5.0").is_err());
    }
}
