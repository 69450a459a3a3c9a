//! The air and the MAC's actions: a frame's start, the walks of its
//! signal starts and ends over the receivers (the hot path: each
//! (frame, receiver) pair costs two events here), medium edges, MAC timers,
//! and carrying out what the MAC returns. Actions of the air are carried
//! out here; the MAC's requests for the node's queue and flow state go to
//! `link`.

use super::*;

impl Simulator {
    pub(super) fn start_tx(&mut self, now: SimTime, node: u32, frame: Frame) {
        let n = &mut self.nodes[node as usize];
        let was_busy = n.radio.is_busy();
        if let Some(lost) = n.radio.start_tx(now) {
            self.count_collision(now, node, lost, Loss::Transmitting);
        }
        if !was_busy {
            self.medium_busy(now, node);
        }
        self.counters.frames_sent[frame.frame_type().index()] += 1;
        if let Some(p) = self.probe.as_mut() {
            let mac = &self.nodes[node as usize].mac;
            p.transmissions.push(TxRecord {
                node,
                at: now,
                kind: frame.kind,
                nav_set: mac.nav().is_set(now),
                response: mac.transmitting_response(),
            });
        }
        let packet = frame.msdu.map(|m| *self.packets.get(m.packet));
        if let Some(t) = self.trace.as_mut() {
            let ev = TraceEvent::new(TraceKind::TxStart, node)
                .frame(&frame)
                .packet(packet.as_ref());
            t.record(now, ev);
        }
        let mut pcap_ticket = None;
        if let Some(w) = self.pcap.as_mut() {
            let msg = packet
                .and_then(|p| p.body.routing_message())
                .map(|m| self.routing.message(m));
            if frame.rx == BROADCAST {
                w.record(now, &frame, packet.as_ref(), msg);
            } else {
                // The addressee's verdict comes with its signal end; one out
                // of carrier-sense reach never hears the frame.
                let at_rx = self.channel.neighbors(node).iter().find(|nb| nb.node == frame.rx);
                let ticket = w.record_pending(now, &frame, packet.as_ref(), msg, at_rx.map(|nb| nb.power_w));
                if at_rx.is_some() {
                    pcap_ticket = Some(ticket);
                } else {
                    w.resolve(ticket, false);
                }
            }
        }
        let receivers = self.channel.neighbors(node).len() as u32;
        self.counters.deliveries += u64::from(receivers);
        let airtime = frame.airtime();
        let seq0 = self.q.reserve(2 * u64::from(receivers) + 1);
        let entry = Airborne {
            start: now,
            frame,
            packet,
            pending: receivers + 1,
            pcap_ticket,
            airtime,
            seq0,
        };
        let id = match self.air_free.pop() {
            Some(i) => {
                self.air[i as usize] = entry;
                i
            }
            None => {
                self.air.push(entry);
                self.air_rx.push(Vec::new());
                (self.air.len() - 1) as u32
            }
        };
        if !self.node_pcaps.is_empty() {
            self.node_pcap_record(now, node, id, false);
        }
        if self.movers.is_empty() {
            self.air_rx[id as usize] = self.channel.lend_by_delay(node);
        } else {
            let rx = &mut self.air_rx[id as usize];
            rx.clear();
            rx.extend_from_slice(self.channel.neighbors_by_delay(node));
        }
        if self.trace.is_some() {
            self.note_rx_power(id);
        }
        // One queued event per edge of the frame: each walks the receivers
        // in order and queues itself again only when another event comes
        // between two of them (`signal_starts`).
        // Queued in the order of their times (start, the transmitter's end,
        // then the first receiver's end, a propagation delay later), which
        // the reserved numbers leave free to choose: the bucket holding the
        // two ends then stays sorted (`EventQueue`).
        let first = self.air_rx[id as usize].first().map(|r| now + r.delay);
        if let Some(at) = first {
            self.q.schedule_reserved(at, seq0, Event::SignalStart { air: id, k: 0 });
        }
        self.q.schedule_reserved(
            now + airtime,
            seq0 + 2 * u64::from(receivers),
            Event::TxEnd { node, air: id },
        );
        if let Some(at) = first {
            self.q
                .schedule_reserved(at + airtime, seq0 + 1, Event::SignalEnd { air: id, k: 0 });
        }
    }

    /// Signal starts of frame `air` from its `k`-th receiver on, each as
    /// its own event (counted, in the order of one event per receiver), for
    /// as long as no other event comes between; then the next one is
    /// queued. The run is the same as with one queued event per receiver.
    pub(super) fn signal_starts(&mut self, mut now: SimTime, air: u32, mut k: u32) {
        let a = &self.air[air as usize];
        let (start, seq0, rate, bytes) = (a.start, a.seq0, a.frame.rate, a.frame.bytes);
        // Out of `air_rx` for the walk (no other walk touches this frame's
        // list), so that each step indexes one vector, not two.
        let rx = std::mem::take(&mut self.air_rx[air as usize]);
        loop {
            let r = rx[k as usize];
            let arrival = Arrival {
                tx: air,
                power_w: r.power_w,
                rate,
                bytes,
            };
            self.signal_start(now, r.node, arrival);
            k += 1;
            let Some(next) = rx.get(k as usize) else {
                break;
            };
            // The next receiver's radio line, asked for while the queue
            // is consulted (`engine::prefetch`).
            prefetch(self.nodes.as_ptr().wrapping_add(next.node as usize));
            let (at, seq) = (start.plus(next.delay), seq0 + 2 * u64::from(k));
            if !self.q.take_if_next(at, seq) {
                self.q.schedule_reserved(at, seq, Event::SignalStart { air, k });
                break;
            }
            now = at;
        }
        self.air_rx[air as usize] = rx;
    }

    /// Signal ends of frame `air`, walked as `signal_starts` walks starts.
    pub(super) fn signal_ends(&mut self, mut now: SimTime, air: u32, mut k: u32) {
        // The frame's fields the walk needs, read once. Its list goes back
        // to its slot after the walk, and only then may the entry be freed
        // (`release_air` below; a freed slot's list is refilled by the next
        // transmission using it).
        let a = &self.air[air as usize];
        // Each receiver's end is its start's delay after the frame's own.
        let (end, seq0) = (a.start + a.airtime, a.seq0);
        let rx = std::mem::take(&mut self.air_rx[air as usize]);
        let first = k;
        loop {
            let node = rx[k as usize].node;
            k += 1;
            self.signal_end(now, node, air);
            let Some(next) = rx.get(k as usize) else {
                break;
            };
            prefetch(self.nodes.as_ptr().wrapping_add(next.node as usize));
            let (at, seq) = (end.plus(next.delay), seq0 + 2 * u64::from(k) + 1);
            if !self.q.take_if_next(at, seq) {
                self.q.schedule_reserved(at, seq, Event::SignalEnd { air, k });
                break;
            }
            now = at;
        }
        self.air_rx[air as usize] = rx;
        // The walk's ends at once: the entry can only be freed by the
        // last end, which is the walk's last step.
        self.release_air(air, k - first);
    }

    /// Keeps the power each receiver of frame `air` gets (`trace_rx_power`).
    #[inline(never)]
    pub(super) fn note_rx_power(&mut self, air: u32) {
        let i = air as usize;
        if self.trace_rx_power.len() <= i {
            self.trace_rx_power.resize_with(i + 1, Vec::new);
        }
        let list = &mut self.trace_rx_power[i];
        list.clear();
        list.extend(self.air_rx[i].iter().map(|r| (r.node, r.power_w)));
    }

    /// The power, W, with which frame `air` arrives at `node`, in the
    /// table `note_rx_power` keeps (a function of the table alone, so that
    /// it can be read while the trace is borrowed).
    pub(super) fn power_in(table: &[Vec<(u32, f64)>], air: u32, node: u32) -> Option<f64> {
        let list = table.get(air as usize)?;
        list.iter().find(|&&(n, _)| n == node).map(|&(_, w)| w)
    }

    /// `ends` of frame `id`'s signal ends and transmitter's end are over.
    pub(super) fn release_air(&mut self, id: u32, ends: u32) {
        let a = &mut self.air[id as usize];
        a.pending -= ends;
        if a.pending == 0 {
            a.packet = None;
            self.air_free.push(id);
            if self.movers.is_empty() {
                let list = std::mem::take(&mut self.air_rx[id as usize]);
                self.channel.give_back_by_delay(a.frame.tx, list);
            }
        }
    }

    /// A frame `node` could have decoded is lost: a collision if the node
    /// was its addressee (docs/contract.md §3).
    pub(super) fn count_collision(&mut self, now: SimTime, node: u32, air: u32, why: Loss) {
        let a = &self.air[air as usize];
        if a.frame.is_addressed_to(node) {
            self.counters.collisions[a.frame.frame_type().index()] += 1;
        }
        if let Some(t) = self.trace.as_mut() {
            let cause = match why {
                Loss::Interference => "interference",
                Loss::Transmitting => "transmitting",
            };
            let mut ev = TraceEvent::new(TraceKind::RxLost, node)
                .frame(&a.frame)
                .packet(a.packet.as_ref())
                .peer(a.frame.tx)
                .cause(cause);
            if let Some(w) = Self::power_in(&self.trace_rx_power, air, node) {
                ev = ev.power_w(w);
            }
            t.record(now, ev);
        }
    }

    #[inline(always)]
    pub(super) fn signal_start(&mut self, now: SimTime, node: u32, arrival: Arrival) {
        let n = &mut self.nodes[node as usize];
        let was_busy = n.radio.is_busy();
        let losses = n.radio.signal_start(now, arrival);
        if losses.is_empty() {
            // The common case, on the node indexed once.
            if !was_busy && n.radio.is_busy() {
                n.mac.handle_medium_busy(now);
                if !self.schemes.is_empty() {
                    self.schemes.on_medium_edge(now, node, true, n);
                }
            }
            return;
        }
        for (lost, why) in losses.iter() {
            self.count_collision(now, node, lost, why);
        }
        if losses.captured() {
            self.nodes[node as usize].mac.captured(now, arrival.airtime());
        }
        if !was_busy {
            self.medium_busy(now, node);
        }
    }

    /// The medium at `node` turned busy (its own transmission or a signal).
    #[inline(always)]
    pub(super) fn medium_busy(&mut self, now: SimTime, node: u32) {
        let n = &mut self.nodes[node as usize];
        n.mac.handle_medium_busy(now);
        if !self.schemes.is_empty() {
            self.schemes.on_medium_edge(now, node, true, n);
        }
    }

    /// The medium at `node` turned idle.
    #[inline(always)]
    pub(super) fn medium_idle(&mut self, now: SimTime, node: u32) {
        let n = &mut self.nodes[node as usize];
        if let Some(a) = Self::idle_edge(&mut self.schemes, now, node, n) {
            self.arm_mac_timer(node, a);
        }
    }

    /// `medium_idle` on the node `n` already indexed: the schemes see the
    /// edge, then the MAC. Returns the one action the MAC may ask for, its
    /// access timer armed (`Dcf::medium_idle`; `arm_mac_timer` queues it).
    #[inline(always)]
    pub(super) fn idle_edge(schemes: &mut Schemes, now: SimTime, node: u32, n: &mut NodeStack) -> Option<TimerSet> {
        if !schemes.is_empty() {
            schemes.on_medium_edge(now, node, false, n);
        }
        n.mac.medium_idle(now)
    }

    /// Queues the timer an idle edge, or a decoded frame that only sets the
    /// NAV, armed at `node`: `apply` for the one action those ask for,
    /// without the round through `scratch`.
    #[inline(always)]
    pub(super) fn arm_mac_timer(&mut self, node: u32, t: TimerSet) {
        self.queue_mac_timer(node, t.timer, t.at, t.gen);
    }

    /// `arm_mac_timer`'s queueing, out of line, with the timer's parts as
    /// arguments: they travel in registers, where a `TimerSet` (three
    /// fields) is passed through memory (a10 336.2 M -> 334.8 M).
    #[inline(never)]
    pub(super) fn queue_mac_timer(&mut self, node: u32, timer: MacTimer, at: SimTime, gen: u32) {
        self.q.schedule(at, Event::MacTimer { node, timer, gen });
    }

    pub(super) fn signal_end(&mut self, now: SimTime, node: u32, air: u32) {
        let n = &mut self.nodes[node as usize];
        let end = n.radio.signal_end(now, air);
        match end {
            // Most ends: a frame only sensed, or a signal the radio was not
            // locked onto. Nothing to record unless a capture file waits
            // for the addressee's verdict; the node stays indexed once.
            SignalEnd {
                rx: None | Some(RxEnd::Sensed(_)),
                lost: None,
            } if self.pcap.is_none() => {
                if end.rx.is_some() && self.sc.eifs_after_sensed {
                    n.mac.handle_rx_error(now);
                }
                if n.medium_turned_idle() {
                    if let Some(a) = Self::idle_edge(&mut self.schemes, now, node, n) {
                        self.arm_mac_timer(node, a);
                    }
                }
            }
            _ => {
                self.reception_ended(now, node, air, end);
                if self.nodes[node as usize].medium_turned_idle() {
                    self.medium_idle(now, node);
                }
            }
        }
    }

    /// What the end of frame `air` at `node` means beyond the common case
    /// (`signal_end`): a frame decoded, received in error or lost, or a
    /// capture file's verdict.
    #[inline(never)]
    pub(super) fn reception_ended(&mut self, now: SimTime, node: u32, air: u32, end: SignalEnd) {
        // Most decoded frames only set the NAV (`Dcf::only_sets_nav`): when
        // nothing records or watches them, that is all there is to do. A
        // data frame overheard goes up to the schemes alone (`apply`), so
        // without schemes it only sets the NAV too.
        if let (None, Some(RxEnd::Ok(_))) = (end.lost, end.rx) {
            let frame = &self.air[air as usize].frame;
            let mac = &mut self.nodes[node as usize].mac;
            if !self.watched && self.schemes.is_empty() && mac.only_sets_nav(frame) {
                if let Some(a) = mac.rx_nav_only(now, frame) {
                    self.arm_mac_timer(node, a);
                }
                return;
            }
        }
        self.reception_ended_in_full(now, node, air, end);
    }

    /// `reception_ended` beyond a frame that only sets the NAV: a function
    /// of its own, so that the short path does not pay this one's set-up.
    #[inline(never)]
    pub(super) fn reception_ended_in_full(&mut self, now: SimTime, node: u32, air: u32, end: SignalEnd) {
        if let Some((lost, why)) = end.lost {
            self.count_collision(now, node, lost, why);
        }
        if let (Some(w), Some(ticket)) = (self.pcap.as_mut(), self.air[air as usize].pcap_ticket) {
            if self.air[air as usize].frame.rx == node {
                w.resolve(ticket, matches!(end.rx, Some(RxEnd::Ok(_))));
            }
        }
        match end.rx {
            Some(RxEnd::Ok(_)) => {
                // The frame is read in place: `air`, `nodes` and `scratch`
                // are borrowed apart, and the actions are carried out after.
                let frame = &self.air[air as usize].frame;
                if let Some(t) = self.trace.as_mut() {
                    let a = &self.air[air as usize];
                    let mut ev = TraceEvent::new(TraceKind::RxOk, node)
                        .frame(&a.frame)
                        .packet(a.packet.as_ref())
                        .peer(a.frame.tx);
                    if let Some(w) = Self::power_in(&self.trace_rx_power, air, node) {
                        ev = ev.power_w(w);
                    }
                    t.record(now, ev);
                }
                if let Some(p) = self.probe.as_mut() {
                    p.receptions.push(RxRecord {
                        node,
                        start: SimTime(now.as_nanos() - frame.airtime().as_nanos()),
                        end: now,
                    });
                }
                if !self.node_pcaps.is_empty() {
                    self.node_pcap_record(now, node, air, true);
                }
                let frame = &self.air[air as usize].frame;
                self.schemes.on_decoded(now, node, frame);
                self.nodes[node as usize].mac.handle_rx(now, frame, &mut self.scratch);
                self.carry_scratch(node, Some(air));
            }
            Some(RxEnd::Error(_)) => self.nodes[node as usize].mac.handle_rx_error(now),
            Some(RxEnd::Sensed(_)) if self.sc.eifs_after_sensed => self.nodes[node as usize].mac.handle_rx_error(now),
            Some(RxEnd::Sensed(_)) => {}
            None => {}
        }
    }

    pub(super) fn tx_end(&mut self, now: SimTime, node: u32, air: u32) {
        if let Some(t) = self.trace.as_mut() {
            let a = &self.air[air as usize];
            t.record(
                now,
                TraceEvent::new(TraceKind::TxEnd, node)
                    .frame(&a.frame)
                    .packet(a.packet.as_ref()),
            );
        }
        self.nodes[node as usize].radio.end_tx(now);
        self.mac_call(node, None, |m, out| m.handle_tx_end(now, out));
        if !self.nodes[node as usize].radio.is_busy() {
            self.medium_idle(now, node);
        }
        self.release_air(air, 1);
    }

    /// Calls the node's MAC and carries out what it asks, including the
    /// actions of further MAC calls made while doing so.
    pub(super) fn mac_call(&mut self, node: u32, air: Option<u32>, f: impl FnOnce(&mut Dcf, &mut Vec<MacAction>)) {
        f(&mut self.nodes[node as usize].mac, &mut self.scratch);
        self.carry_scratch(node, air);
    }

    /// Carries out the actions a MAC call left in `scratch`, if any: most
    /// calls (a medium edge at a station with nothing to send) ask for
    /// nothing. Inlined: out of line it cost 2.5 % of the grid's
    /// instructions (407.1 M against 397.1 M).
    #[inline(always)]
    pub(super) fn carry_scratch(&mut self, node: u32, air: Option<u32>) {
        if self.scratch.is_empty() {
            return;
        }
        let out = std::mem::take(&mut self.scratch);
        self.carry_out(node, air, out);
    }

    /// Carries out `node`'s MAC actions in `out`, and those they lead to
    /// (appended to it); `out` then becomes the action buffer again.
    #[inline(always)]
    pub(super) fn carry_out(&mut self, node: u32, air: Option<u32>, mut out: Vec<MacAction>) {
        let mut i = 0;
        while i < out.len() {
            let a = out[i];
            i += 1;
            self.apply(node, air, a, &mut out);
        }
        out.clear();
        self.scratch = out;
    }

    pub(super) fn apply(&mut self, node: u32, air: Option<u32>, a: MacAction, out: &mut Vec<MacAction>) {
        let now = self.q.now();
        match a {
            MacAction::Transmit(frame) => self.start_tx(now, node, frame),
            MacAction::SetTimer { timer, at, gen } => self.q.schedule(at, Event::MacTimer { node, timer, gen }),
            MacAction::Deliver { msdu, from } => {
                self.link.handed_up();
                let air = air.expect("deliveries come from a decoded frame");
                let a = &self.air[air as usize];
                let mut copy = a.packet.expect("data frames carry a packet");
                if a.frame.rx == BROADCAST {
                    // A broadcast is delivered to the air once (the ledger
                    // counted it then); receivers act on its content and
                    // create packets of their own.
                    if let Some(m) = copy.body.routing_message() {
                        self.with_routing(now, node, out, |r, acts| {
                            r.handle_message(now, node, from, m, copy.ttl, acts)
                        });
                    }
                    self.arp_heard(now, node, copy.body, out);
                    return;
                }
                if self.packets.is_handed_over(msdu.packet) {
                    // The addressee already took this packet in: a
                    // retransmission whose earlier copy arrived (its ACK was
                    // lost) and that the sequence cache (DUP_CACHE_DEPTH
                    // numbers per transmitter) no longer remembers, because
                    // a link extension's answers interleaved other MSDUs.
                    // An ideal §9.3.2.10 cache drops it; so does this.
                    self.nodes[node as usize].mac.stats.duplicates += 1;
                    return;
                }
                copy.hops = copy.hops.saturating_add(1);
                copy.ff_run = msdu.ff_run;
                let id = self.packets.hand_over(msdu.packet, copy);
                if let Body::Arp { .. } = copy.body {
                    // An ARP reply ends at the link layer of its addressee.
                    self.packets.deliver(id);
                    self.arp_heard(now, node, copy.body, out);
                    return;
                }
                self.net_receive(now, node, id, Some(from), out);
            }
            MacAction::Overheard(frame) => {
                let packet = air.and_then(|a| self.air[a as usize].packet);
                self.schemes.on_overheard(now, node, &frame, packet.as_ref());
            }
            MacAction::TxDone { msdu, next_hop } => {
                if next_hop == BROADCAST {
                    self.packets.deliver(msdu.packet);
                } else if self.packets.is_handed_over(msdu.packet) {
                    self.packets.release_copy(msdu.packet);
                } else {
                    // Acknowledged but never taken in: the receiver's
                    // duplicate cache (§9.3.2.10) held this transmitter's
                    // sequence number from an earlier MSDU, 4,096 numbers
                    // back, and this one came with the Retry bit. As in
                    // 802.11 the packet is lost there and the sender does
                    // not know; the ledger counts it with the MAC's losses.
                    self.drop_packet(node, msdu.packet, DropCause::MacRetry);
                }
                self.msdu_left(now, node, msdu.label, out);
                self.feed_mac(now, node, out);
            }
            MacAction::TxFailed { msdu, next_hop } => {
                let p = *self.packets.get(msdu.packet);
                if self.schemes.on_tx_failed(now, node, &p) || self.routing.is_static() {
                    self.drop_packet(node, msdu.packet, DropCause::MacRetry);
                } else {
                    self.route_tx_failed(now, node, msdu.packet, next_hop, out);
                }
                self.msdu_left(now, node, msdu.label, out);
                self.feed_mac(now, node, out);
            }
            // The MAC's requests for the node's queue and flow state.
            ask => {
                let mut parts = Parts {
                    nodes: &mut self.nodes,
                    packets: &mut self.packets,
                    trace: self.trace.as_mut(),
                };
                if self.link.answer(now, node, ask, &mut parts, out) {
                    self.feed_mac(now, node, out);
                }
            }
        }
    }

    /// An MSDU of label `label` left `node` (sent on, or dropped).
    pub(super) fn msdu_left(&mut self, now: SimTime, node: u32, label: Option<u32>, out: &mut Vec<MacAction>) {
        let mut parts = Parts {
            nodes: &mut self.nodes,
            packets: &mut self.packets,
            trace: self.trace.as_mut(),
        };
        self.link.msdu_left(now, node, label, &mut parts, out);
    }

    /// Hands the MAC its next MSDU if it has none (`Link::feed`), and arms
    /// the queue's timer if its discipline holds packets back.
    pub(super) fn feed_mac(&mut self, now: SimTime, node: u32, out: &mut Vec<MacAction>) {
        let mut parts = Parts {
            nodes: &mut self.nodes,
            packets: &mut self.packets,
            trace: self.trace.as_mut(),
        };
        let want = self.link.feed(now, node, &mut parts, out);
        if let Some((t, gen)) = self.nodes[node as usize].queue_timer.rearm(want) {
            self.q.schedule(t.max(now), Event::QueueTimer { node, gen });
        }
    }
}
