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
//! Each scheme implements `Scheme` (every hook has a default that does
//! nothing) in a private module of its own; the registry below (its enum
//! and `Schemes::new`) is the one place that names them. A scheme returns
//! `SchemeAction`s; the simulator carries them out. Queue disciplines
//! (`net::queue`), the MAC's requests (`link`), congestion control
//! (`transport::tcp`) and reception models (`phy`) have seams of their own
//! layer; this one is for what spans layers, like Neighborhood RED.

mod nred;
mod throttle;

use crate::flow::FlowSpec;
use crate::mac::frame::Frame;
use crate::metrics::summary::{SchemeSections, Traces};
use crate::net::packet::Packet;
use crate::net::throttle::ThrottleInput;
use crate::phy::channel::Channel;
use crate::stack::NodeStack;
use crate::time::SimTime;
pub use nred::NredSetup;

/// What a scheme sees of the run.
pub struct View<'a> {
    /// Every node's radio, MAC and interface queue.
    pub nodes: &'a [NodeStack],
    /// Who hears whom.
    pub channel: &'a Channel,
    /// The run's flows.
    pub flows: &'a [FlowSpec],
    /// The run's end.
    pub end: SimTime,
    /// The series' bin (`trace.series_interval_s`).
    pub bin: crate::time::Duration,
}

/// What the simulator must do for a scheme.
#[derive(Clone, Debug, PartialEq)]
pub enum SchemeAction {
    /// A new control packet from `node` to `next_hop`, into its interface queue.
    Send {
        /// The sending node.
        node: u32,
        /// The packet (the ledger gives it an id).
        packet: Packet,
        /// The neighbour it goes to.
        next_hop: u32,
    },
    /// Set the release spacing Δ of `flow`'s packets originated at `node`
    /// in its interface queue (ingress throttling, net/throttle/).
    SetShaper {
        /// The flow's source.
        node: u32,
        /// The flow.
        flow: u32,
        /// The spacing between releases.
        delta: crate::time::Duration,
    },
    /// Wake scheme number `scheme` at `at` with `kind` (its own timer
    /// numbering). Schemes leave `scheme` at 0; the registry fills it in.
    SetTimer {
        /// The node the timer is for.
        node: u32,
        /// The scheme's number in the registry.
        scheme: u8,
        /// The scheme's own timer kind.
        kind: u8,
        /// When it fires.
        at: SimTime,
    },
}

/// The hooks of one remedy across layers: the simulator calls each at its
/// point of the run (the table above). Every hook does nothing unless the
/// scheme says otherwise.
pub trait Scheme: Send {
    /// Arms the first timers.
    fn start(&mut self, _out: &mut Vec<SchemeAction>) {}
    /// `node`'s medium turned busy or idle.
    fn on_medium_edge(&mut self, _now: SimTime, _node: u32, _busy: bool, _stack: &NodeStack) {}
    /// `node` decoded `frame` (any addressee).
    fn on_decoded(&mut self, _now: SimTime, _node: u32, _frame: &Frame) {}
    /// Whether the scheme reads data frames overheard for other stations
    /// (`on_overheard`); the MACs then report them.
    fn wants_overheard(&self) -> bool {
        false
    }
    /// `node` overheard a data frame for another station.
    fn on_overheard(&mut self, _now: SimTime, _node: u32, _frame: &Frame, _packet: Option<&Packet>) {}
    /// A control packet of the scheme reached its addressee `node`.
    fn on_control(&mut self, _now: SimTime, _node: u32, _from: u32, _packet: &Packet) {}
    /// Whether the scheme drops `packet` before it enters `node`'s queue.
    fn admit_outgoing(&mut self, _now: SimTime, _node: u32, _packet: &Packet) -> bool {
        false
    }
    /// Whether the scheme drops a data packet `node` received from a neighbour.
    fn admit_incoming(&mut self, _now: SimTime, _node: u32, _packet: &Packet) -> bool {
        false
    }
    /// Whether a packet the MAC gave up on is the scheme's own.
    fn on_tx_failed(&mut self, _now: SimTime, _node: u32, _packet: &Packet) -> bool {
        false
    }
    /// A timer of kind `kind` the scheme armed for `node` fired.
    fn on_timer(&mut self, _now: SimTime, _node: u32, _kind: u8, _view: &View, _out: &mut Vec<SchemeAction>) {}
    /// A trace bin ended.
    fn on_bin(&mut self, _now: SimTime, _view: &View) {}
    /// Adds the scheme's summary sections; `throughput_kbps` are the flows'
    /// measured throughputs.
    fn summary(&self, _view: &View, _throughput_kbps: &[f64], _out: &mut SchemeSections) {}
    /// Adds the scheme's traces.
    fn traces(&self, _out: &mut Traces) {}
}

/// What the schemes of a run are built from; each scheme decides from
/// its part whether it runs.
pub struct SchemeSetup {
    /// Neighborhood RED's part.
    pub nred: NredSetup,
    /// Ingress throttling's part.
    pub throttle: ThrottleInput,
}

/// One registered scheme. Dispatched by enum (no `dyn`): the medium-edge
/// hooks sit inside the signal walks, and boxed trait objects there cost
/// the grid (a10) 0.4 % more instructions, with no scheme in the run.
enum Registered {
    Nred(Box<nred::NredScheme>),
    Throttle(Box<throttle::ThrottleScheme>),
}

/// The schemes of a run, in registration order (usually none or one).
#[derive(Default)]
pub struct Schemes {
    list: Vec<Registered>,
}

/// Runs `$body` with `$s` bound to each registered scheme, as a `Scheme`.
macro_rules! each {
    ($list:expr, $s:ident => $body:expr) => {
        for scheme in $list {
            rare();
            match scheme {
                Registered::Nred($s) => $body,
                Registered::Throttle($s) => $body,
            }
        }
    };
}

/// Marks the body of every registry loop as the rare path: most runs have
/// no scheme, and LLVM otherwise weighs the inlined hooks (NRED's, in the
/// signal walks) as hot and spills the walks' counters to give them
/// registers. Measured instructions without schemes: a10 298.4 M -> 292.5 M,
/// b-quick 449.6 M -> 440.2 M; with NRED (a10's grid) 264.1 M -> 260.3 M.
#[cold]
#[inline(never)]
fn rare() {}

impl Schemes {
    /// Registers the schemes `setup` asks for.
    pub fn new(setup: SchemeSetup) -> Self {
        let mut list = Vec::new();
        if let Some(s) = nred::NredScheme::new(setup.nred) {
            list.push(Registered::Nred(Box::new(s)));
        }
        if let Some(s) = throttle::ThrottleScheme::new(setup.throttle) {
            list.push(Registered::Throttle(Box::new(s)));
        }
        Schemes { list }
    }

    /// Whether the run has no scheme.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Arms the first timers.
    pub fn start(&mut self, out: &mut Vec<SchemeAction>) {
        for i in 0..self.list.len() {
            let from = out.len();
            each!(&mut self.list[i..=i], s => s.start(out));
            tag(&mut out[from..], i);
        }
    }

    /// `node`'s medium turned busy or idle.
    pub fn on_medium_edge(&mut self, now: SimTime, node: u32, busy: bool, stack: &NodeStack) {
        each!(&mut self.list, s => s.on_medium_edge(now, node, busy, stack));
    }

    /// `node` decoded `frame`.
    pub fn on_decoded(&mut self, now: SimTime, node: u32, frame: &Frame) {
        each!(&mut self.list, s => s.on_decoded(now, node, frame));
    }

    /// Whether any scheme reads data frames overheard for other stations.
    pub fn wants_overheard(&self) -> bool {
        let mut any = false;
        each!(&self.list, s => any |= s.wants_overheard());
        any
    }

    /// `node` overheard a data frame for another station.
    pub fn on_overheard(&mut self, now: SimTime, node: u32, frame: &Frame, packet: Option<&Packet>) {
        each!(&mut self.list, s => s.on_overheard(now, node, frame, packet));
    }

    /// A scheme's control packet reached its addressee `node`.
    pub fn on_control(&mut self, now: SimTime, node: u32, from: u32, packet: &Packet) {
        each!(&mut self.list, s => s.on_control(now, node, from, packet));
    }

    /// Whether a scheme drops `packet` before it enters `node`'s interface queue.
    pub fn admit_outgoing(&mut self, now: SimTime, node: u32, packet: &Packet) -> bool {
        let mut drop = false;
        each!(&mut self.list, s => drop |= s.admit_outgoing(now, node, packet));
        drop
    }

    /// Whether a scheme drops a data packet `node` received from a neighbour.
    pub fn admit_incoming(&mut self, now: SimTime, node: u32, packet: &Packet) -> bool {
        let mut drop = false;
        each!(&mut self.list, s => drop |= s.admit_incoming(now, node, packet));
        drop
    }

    /// Whether a failed packet is a scheme's own: then it is dropped, and
    /// routing does not hear of the failure.
    pub fn on_tx_failed(&mut self, now: SimTime, node: u32, packet: &Packet) -> bool {
        let mut own = false;
        each!(&mut self.list, s => own |= s.on_tx_failed(now, node, packet));
        own
    }

    /// A timer scheme number `scheme` armed fired.
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
        each!(&mut self.list[scheme as usize..=scheme as usize], s => s.on_timer(now, node, kind, view, out));
        tag(&mut out[from..], scheme as usize);
    }

    /// A trace bin ended.
    pub fn on_bin(&mut self, now: SimTime, view: &View) {
        each!(&mut self.list, s => s.on_bin(now, view));
    }

    /// Adds each scheme's summary section; `throughput_kbps` are the
    /// flows' measured throughputs.
    pub fn summary(&self, view: &View, throughput_kbps: &[f64], out: &mut SchemeSections) {
        each!(&self.list, s => s.summary(view, throughput_kbps, out));
    }

    /// Adds each scheme's traces.
    pub fn traces(&self, out: &mut Traces) {
        each!(&self.list, s => s.traces(out));
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
