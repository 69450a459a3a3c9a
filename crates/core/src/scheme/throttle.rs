//! Ingress throttling (`net::throttle`) at the scheme seam: the shares are computed
//! centrally from the true positions and routes, as the paper's simulations
//! did ("information about the bottleneck C-load shares ... is available at
//! sources", §5.1), and each source's spacing is set through the interface
//! queue. With `recompute = "once"` that happens before the start, with all
//! flows (§5.1: "we configure the delay parameter of the scheduler prior to
//! the start"); with `"on_change"` again at every flow start and stop, every
//! route change and, while nodes move, every second if the L-regions changed
//! ("at a time when the handover should occur we instruct the simulator to
//! configure delay parameter of the scheduler according to the current
//! network conditions").

use super::{Scheme, SchemeAction, View};
use crate::metrics::summary::SchemeSections;
use crate::net::throttle::{allocate, report, FlowShare, ThrottleConfig, ThrottleInput, UpdateSummary};
use crate::time::{Duration, SimTime};

/// Timer kinds.
const CHANGE: u8 = 0;
const MOVED: u8 = 1;

/// How often shares are checked while nodes move.
const MOVE_CHECK: Duration = Duration::from_millis(1000);

/// Ingress throttling over a run: its inputs, the instants it recomputes
/// at and every allocation it applied.
pub struct ThrottleScheme {
    sc: Box<ThrottleInput>,
    cfg: ThrottleConfig,
    /// Whether sources shape (`mac.queue = "throttle"` and `enforce`).
    shaping: bool,
    /// Instants at which the active flows or routes change (on_change).
    changes: Vec<SimTime>,
    /// Every allocation applied, in time order.
    updates: Vec<(SimTime, Vec<FlowShare>)>,
    moving: bool,
}

impl ThrottleScheme {
    /// Throttling over `sc`, if the run has a `[throttle]` table.
    pub fn new(sc: ThrottleInput) -> Option<Self> {
        let cfg = sc.cfg.clone()?;
        let shaping = sc.shaping(&cfg);
        let mut changes: Vec<SimTime> = Vec::new();
        if cfg.on_change() {
            for f in &sc.flows {
                changes.push(f.start);
                changes.push(f.stop);
                changes.extend(f.route_changes.iter().map(|c| c.0));
            }
            changes.retain(|&t| t > SimTime::ZERO && t < sc.duration);
            changes.sort_unstable();
            changes.dedup();
        }
        let moving = cfg.on_change() && sc.trajectories.iter().flatten().any(|t| !t.is_static());
        Some(ThrottleScheme {
            sc: Box::new(sc),
            cfg,
            shaping,
            changes,
            updates: Vec::new(),
            moving,
        })
    }

    fn active_at(&self, t: SimTime) -> Vec<bool> {
        self.sc.flows.iter().map(|f| f.start <= t && t < f.stop).collect()
    }

    /// Sets the spacing of every flow `which` selects, and records the allocation.
    fn apply(
        &mut self,
        now: SimTime,
        shares: Vec<FlowShare>,
        out: &mut Vec<SchemeAction>,
        which: fn(&FlowShare) -> bool,
    ) {
        for (f, s) in shares.iter().enumerate() {
            if which(s) {
                self.shape(f, s, out);
            }
        }
        self.updates.push((now, shares));
    }

    fn shape(&self, flow: usize, s: &FlowShare, out: &mut Vec<SchemeAction>) {
        if !self.shaping {
            return;
        }
        if let Some(delta) = s.delta {
            out.push(SchemeAction::SetShaper {
                node: self.sc.flows[flow].src,
                flow: flow as u32,
                delta,
            });
        }
    }
}

impl Scheme for ThrottleScheme {
    /// The first allocation, before any packet is sent. Under "on_change"
    /// every flow's spacing is that of the allocation at its own start, so
    /// that its first packet is already shaped.
    fn start(&mut self, out: &mut Vec<SchemeAction>) {
        if !self.cfg.on_change() {
            let all = vec![true; self.sc.flows.len()];
            let shares = allocate(&self.sc, &self.cfg, SimTime::ZERO, &all);
            self.apply(SimTime::ZERO, shares, out, |_| true);
            return;
        }
        let at_zero = allocate(&self.sc, &self.cfg, SimTime::ZERO, &self.active_at(SimTime::ZERO));
        for (f, spec) in self.sc.flows.iter().enumerate() {
            if spec.start > SimTime::ZERO {
                let later = allocate(&self.sc, &self.cfg, spec.start, &self.active_at(spec.start));
                self.shape(f, &later[f], out);
            }
        }
        self.apply(SimTime::ZERO, at_zero, out, |s| s.active);
        for &t in &self.changes {
            out.push(timer(CHANGE, t));
        }
        if self.moving {
            out.push(timer(MOVED, SimTime::ZERO + MOVE_CHECK));
        }
    }

    fn on_timer(&mut self, now: SimTime, _node: u32, kind: u8, _view: &View, out: &mut Vec<SchemeAction>) {
        let shares = allocate(&self.sc, &self.cfg, now, &self.active_at(now));
        if kind == MOVED {
            if now + MOVE_CHECK < self.sc.duration {
                out.push(timer(MOVED, now + MOVE_CHECK));
            }
            if self.updates.last().is_some_and(|(_, last)| same_shares(last, &shares)) {
                return;
            }
        }
        self.apply(now, shares, out, |s| s.active);
    }

    fn summary(&self, _view: &View, throughput_kbps: &[f64], out: &mut SchemeSections) {
        let all = vec![true; self.sc.flows.len()];
        let shares = allocate(&self.sc, &self.cfg, SimTime::ZERO, &all);
        let mut s = report(&self.sc, &self.cfg, &shares);
        s.shaping = self.shaping;
        s.set_unfairness(throughput_kbps);
        s.updates = self
            .updates
            .iter()
            .map(|(t, shares)| UpdateSummary {
                at_s: t.as_secs_f64(),
                phi: shares.iter().map(|s| s.phi.map(|p| p.to_f64())).collect(),
                hops: shares.iter().map(|s| s.active.then_some(s.hops)).collect(),
                rate_kbps: shares.iter().map(|s| s.rate_kbps).collect(),
                delta_s: shares.iter().map(|s| s.delta.map(|d| d.as_secs_f64())).collect(),
            })
            .collect();
        out.set_maxmin_unfairness(s.u);
        out.push("throttle", &s);
    }
}

fn same_shares(a: &[FlowShare], b: &[FlowShare]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.phi == y.phi && x.hops == y.hops)
}

fn timer(kind: u8, at: SimTime) -> SchemeAction {
    SchemeAction::SetTimer {
        node: 0,
        scheme: 0,
        kind,
        at,
    }
}
