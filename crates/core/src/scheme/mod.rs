//! The scheme seam: remedies that cross layers plug in here, at named
//! points of the simulator's loop, instead of reaching into it.
//!
//! | seam | called when | a scheme may |
//! | --- | --- | --- |
//! | `on_medium_edge` | a node's medium turns busy or idle | read radio and NAV times |
//! | `on_decoded` | a node decodes a frame (any addressee) | learn neighbours, airtime |
//! | `on_overheard` | a node overhears a data frame for another node | read its packet |
//! | `on_control` | a scheme control packet reaches its addressee | act on it |
//! | `admit_outgoing` | a packet is about to enter the interface queue | drop it |
//! | `admit_incoming` | a data packet arrives from a neighbour | drop it |
//! | `on_tx_failed` | the MAC gave up on a packet | claim its own packets |
//! | `on_timer` | a timer the scheme armed fires | send packets, re-arm |
//! | `on_bin` | a 1 s trace bin ends | sample |
//! | `SetShaper` (action) | a scheme sets a source's spacing | shape a flow in the interface queue |
//! | `summary` | the run ends (with the flows' throughputs) | add its section to the summary |
//!
//! A scheme returns `SchemeAction`s; the simulator carries them out. Queue
//! disciplines (`net::queue`), MAC extensions (`mac`), congestion control
//! (`transport::tcp`) and reception models (`phy`) have seams of their own
//! layer; this one is for what spans layers, like Neighborhood RED.

use crate::flow::FlowSpec;
use crate::mac::frame::Frame;
use crate::metrics::summary::{SchemeSections, Traces};
use crate::net::nred::scheme::{NredScheme, NredSetup};
use crate::net::packet::Packet;
use crate::net::throttle::scheme::ThrottleScheme;
use crate::net::throttle::ThrottleInput;
use crate::phy::channel::Channel;
use crate::stack::NodeStack;
use crate::time::SimTime;

/// What a scheme sees of the run.
pub struct View<'a> {
    pub nodes: &'a [NodeStack],
    pub channel: &'a Channel,
    pub flows: &'a [FlowSpec],
    pub end: SimTime,
    /// The series' bin (`trace.series_interval_s`).
    pub bin: crate::time::Duration,
}

/// What the simulator must do for a scheme.
#[derive(Clone, Debug, PartialEq)]
pub enum SchemeAction {
    /// A new control packet from `node` to `next_hop`, into its interface queue.
    Send { node: u32, packet: Packet, next_hop: u32 },
    /// Set the release spacing Δ of `flow`'s packets originated at `node`
    /// in its interface queue (ingress throttling, net/throttle/).
    SetShaper {
        node: u32,
        flow: u32,
        delta: crate::time::Duration,
    },
    /// Wake scheme number `scheme` at `at` with `kind` (its own timer
    /// numbering). Schemes leave `scheme` at 0; the registry fills it in.
    SetTimer {
        node: u32,
        scheme: u8,
        kind: u8,
        at: SimTime,
    },
}

/// What the schemes of a run are built from; each scheme decides from
/// its part whether it runs.
pub struct SchemeSetup {
    /// Neighborhood RED's part.
    pub nred: NredSetup,
    /// Ingress throttling's part.
    pub throttle: ThrottleInput,
}

/// One remedy, dispatched by enum (no `dyn`): each variant is a scheme.
pub enum Scheme {
    /// Neighborhood RED (Xu et al.; `net::nred`).
    Nred(Box<NredScheme>),
    /// Ingress throttling with max-min shares (Osipov and Tschudin; `net::throttle`).
    Throttle(Box<ThrottleScheme>),
}

/// The schemes of a run, in registration order (usually none or one).
#[derive(Default)]
pub struct Schemes {
    list: Vec<Scheme>,
}

macro_rules! each {
    ($self:ident, $s:ident => $body:expr) => {
        for scheme in $self.list.iter_mut() {
            match scheme {
                Scheme::Nred($s) => $body,
                Scheme::Throttle($s) => $body,
            }
        }
    };
}

impl Schemes {
    /// Registers the schemes `setup` asks for.
    pub fn new(setup: SchemeSetup) -> Self {
        let mut list = Vec::new();
        if let Some(s) = NredScheme::new(setup.nred) {
            list.push(Scheme::Nred(Box::new(s)));
        }
        if let Some(s) = ThrottleScheme::new(setup.throttle) {
            list.push(Scheme::Throttle(Box::new(s)));
        }
        Schemes { list }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Arms the first timers.
    pub fn start(&mut self, out: &mut Vec<SchemeAction>) {
        for (i, scheme) in self.list.iter_mut().enumerate() {
            let from = out.len();
            match scheme {
                Scheme::Nred(s) => s.start(out),
                Scheme::Throttle(s) => s.start(out),
            }
            tag(&mut out[from..], i);
        }
    }

    pub fn on_medium_edge(&mut self, now: SimTime, node: u32, busy: bool, stack: &NodeStack) {
        each!(self, s => s.on_medium_edge(now, node, busy, stack));
    }

    pub fn on_decoded(&mut self, now: SimTime, node: u32, frame: &Frame) {
        each!(self, s => s.on_decoded(now, node, frame));
    }

    /// Whether any scheme reads data frames overheard for other stations
    /// (`on_overheard`): NRED does, for its neighbourhood queue (Xu et al. §4);
    /// ingress throttling does not.
    pub fn wants_overheard(&self) -> bool {
        self.list.iter().any(|s| matches!(s, Scheme::Nred(_)))
    }

    pub fn on_overheard(&mut self, now: SimTime, node: u32, frame: &Frame, packet: Option<&Packet>) {
        each!(self, s => s.on_overheard(now, node, frame, packet));
    }

    pub fn on_control(&mut self, now: SimTime, node: u32, from: u32, packet: &Packet) {
        each!(self, s => s.on_control(now, node, from, packet));
    }

    /// Whether a scheme drops `packet` before it enters `node`'s interface queue.
    pub fn admit_outgoing(&mut self, now: SimTime, node: u32, packet: &Packet) -> bool {
        let mut drop = false;
        each!(self, s => drop |= s.admit_outgoing(now, node, packet));
        drop
    }

    /// Whether a scheme drops a data packet `node` received from a neighbour.
    pub fn admit_incoming(&mut self, now: SimTime, node: u32, packet: &Packet) -> bool {
        let mut drop = false;
        each!(self, s => drop |= s.admit_incoming(now, node, packet));
        drop
    }

    /// Whether a failed packet is a scheme's own: then it is dropped, and
    /// routing does not hear of the failure.
    pub fn on_tx_failed(&mut self, now: SimTime, node: u32, packet: &Packet) -> bool {
        let mut own = false;
        each!(self, s => own |= s.on_tx_failed(now, node, packet));
        own
    }

    pub fn on_timer(
        &mut self,
        now: SimTime,
        node: u32,
        scheme: u8,
        kind: u8,
        view: &View,
        out: &mut Vec<SchemeAction>,
    ) {
        let from = out.len();
        match &mut self.list[scheme as usize] {
            Scheme::Nred(s) => s.on_timer(now, node, kind, view, out),
            Scheme::Throttle(s) => s.on_timer(now, node, kind, view, out),
        }
        tag(&mut out[from..], scheme as usize);
    }

    pub fn on_bin(&mut self, now: SimTime, view: &View) {
        each!(self, s => s.on_bin(now, view));
    }

    /// Adds each scheme's summary section; `throughput_kbps` are the
    /// flows' measured throughputs.
    pub fn summary(&self, view: &View, throughput_kbps: &[f64], out: &mut SchemeSections) {
        for scheme in &self.list {
            match scheme {
                Scheme::Nred(s) => s.summary(view, out),
                Scheme::Throttle(s) => s.summary(throughput_kbps, out),
            }
        }
    }

    /// Adds each scheme's traces.
    pub fn traces(&self, out: &mut Traces) {
        for scheme in &self.list {
            if let Scheme::Nred(s) = scheme {
                s.traces(out);
            }
        }
    }
}

/// Marks timer actions with the number of the scheme that asked for them.
fn tag(actions: &mut [SchemeAction], index: usize) {
    for a in actions {
        if let SchemeAction::SetTimer { scheme, .. } = a {
            *scheme = index as u8;
        }
    }
}
