//! The network side of a node: receiving, routing and delivering packets,
//! the interface queue's admission, ns-2's ARP, the TCP ends and the
//! sources, the schemes' actions and the nodes' motion.

use super::*;

impl Simulator {
    /// Drops packet `id` at `node` in the ledger, and traces the drop if
    /// the ledger counted it (a copy already handed over is not a drop).
    pub(super) fn drop_packet(&mut self, node: u32, id: u32, cause: DropCause) {
        let p = *self.packets.get(id);
        if self.packets.drop_packet(id, cause) {
            let forward = !matches!(p.body, Body::Tcp(seg) if seg.is_ack);
            if p.flow != NO_FLOW && p.kind == PacketKind::Data && forward {
                self.flows[p.flow as usize].losses[cause as usize] += 1;
            }
            if let Some(t) = self.trace.as_mut() {
                t.record(self.q.now(), TraceEvent::drop(node, &p, cause));
            }
        }
    }

    /// A packet arrived at `node`: from neighbour `from`, or (None) from
    /// the node's own transport or routing.
    pub(super) fn net_receive(
        &mut self,
        now: SimTime,
        node: u32,
        id: u32,
        from: Option<u32>,
        out: &mut Vec<MacAction>,
    ) {
        let p = *self.packets.get(id);
        if let Some(from) = from {
            if let Some(m) = p.body.routing_message() {
                // Routing messages travel hop by hop: each is for this node.
                self.packets.deliver(id);
                self.with_routing(now, node, out, |r, acts| {
                    r.handle_message(now, node, from, m, p.ttl, acts)
                });
                return;
            }
            if p.kind == PacketKind::Control {
                // A scheme's control packet, addressed to this node.
                self.packets.deliver(id);
                self.schemes.on_control(now, node, from, &p);
                return;
            }
            if self.schemes.admit_incoming(now, node, &p) {
                self.drop_packet(node, id, DropCause::Aqm);
                return;
            }
            self.routing.note_data_from(now, node, p.src, from);
        }
        if p.dst == node {
            self.deliver_up(now, node, id, out);
            return;
        }
        if from.is_some() {
            if p.ttl == 0 {
                self.drop_packet(node, id, DropCause::TtlExpired);
                return;
            }
            self.packets.get_mut(id).ttl -= 1;
        }
        let p = *self.packets.get(id);
        let next_hop = self.with_routing(now, node, out, |r, acts| r.route(now, node, id, &p, acts));
        if let (Some(nh), Some(_)) = (next_hop, from) {
            self.link.taken_in(node, nh, p.flow);
        }
        if let Some(nh) = next_hop {
            let queued = self.try_enqueue(now, node, id, nh, out);
            if queued && from.is_some() {
                self.link.relay_queued(now, &mut self.nodes[node as usize], out);
            }
        }
    }

    /// Puts a packet in `node`'s interface queue towards `next_hop`, or drops it if full.
    pub(super) fn enqueue(&mut self, now: SimTime, node: u32, id: u32, next_hop: u32, out: &mut Vec<MacAction>) {
        self.try_enqueue(now, node, id, next_hop, out);
    }

    /// As `enqueue`; true if the packet was queued.
    pub(super) fn try_enqueue(
        &mut self,
        now: SimTime,
        node: u32,
        id: u32,
        next_hop: u32,
        out: &mut Vec<MacAction>,
    ) -> bool {
        if !self.arp.is_empty() && next_hop != BROADCAST && !self.arp_resolved(now, node, id, next_hop, out) {
            return false;
        }
        let p = self.packets.get(id);
        if self.schemes.admit_outgoing(now, node, p) {
            self.drop_packet(node, id, DropCause::Aqm);
            return false;
        }
        let p = self.packets.get(id);
        let q = Queued {
            packet: id,
            next_hop,
            bytes: p.bytes,
            control: p.is_control(),
            flow: p.flow,
            local: p.src == node,
            label: self.link.label(p),
        };
        if self.link.unbounded(q.label, q.local) {
            self.nodes[node as usize].queue.enqueue_unbounded(now, q);
        } else if let Err((q, cause)) = self.nodes[node as usize].queue.enqueue(now, q) {
            self.drop_packet(node, q.packet, cause);
            return false;
        }
        if let Some(t) = self.trace.as_mut() {
            let p = self.packets.get(id);
            t.record(
                now,
                TraceEvent::new(TraceKind::Enqueue, node).packet(Some(p)).peer(next_hop),
            );
        }
        self.feed_mac(now, node, out);
        true
    }

    /// ns-2's ARP (`net::arp`): whether packet `id` for `next_hop` may go
    /// to the interface queue now; if not it is held (a request goes out)
    /// or dropped. ARP's own packets always go.
    pub(super) fn arp_resolved(
        &mut self,
        now: SimTime,
        node: u32,
        id: u32,
        next_hop: u32,
        out: &mut Vec<MacAction>,
    ) -> bool {
        if matches!(self.packets.get(id).body, Body::Arp { .. }) {
            return true;
        }
        match self.arp[node as usize].resolve(next_hop, id) {
            Resolve::Send => true,
            Resolve::Held { dropped } => {
                if let Some(d) = dropped {
                    self.drop_packet(node, d, DropCause::Arp);
                }
                self.send_arp(now, node, true, next_hop, out);
                false
            }
            Resolve::Failed { held } => {
                for p in held.into_iter().chain([id]) {
                    self.drop_packet(node, p, DropCause::Arp);
                }
                false
            }
        }
    }

    /// Sends an ARP request for `addr` (broadcast) or a reply to `addr`.
    pub(super) fn send_arp(&mut self, now: SimTime, node: u32, request: bool, addr: u32, out: &mut Vec<MacAction>) {
        let to = if request { BROADCAST } else { addr };
        let packet = Packet {
            uid: 0,
            kind: PacketKind::Control,
            flow: NO_FLOW,
            src: node,
            dst: to,
            bytes: ARP_BYTES,
            payload_bytes: 0,
            created: now,
            ttl: 1,
            hops: 0,
            ff_run: 0,
            body: Body::Arp {
                request,
                sender: node,
                target: addr,
            },
        };
        let id = self.packets.create(packet);
        self.try_enqueue(now, node, id, to, out);
    }

    /// An ARP packet from `sender` reached `node` (`arpinput`): the packet
    /// held for `sender` goes, and a request for `node` is answered.
    pub(super) fn arp_heard(&mut self, now: SimTime, node: u32, body: Body, out: &mut Vec<MacAction>) {
        let Body::Arp {
            request,
            sender,
            target,
        } = body
        else {
            return;
        };
        if self.arp.is_empty() {
            return;
        }
        if let Some(held) = self.arp[node as usize].heard(sender) {
            self.try_enqueue(now, node, held, sender, out);
        }
        if request && target == node {
            self.send_arp(now, node, false, sender, out);
        }
    }

    pub(super) fn deliver_up(&mut self, now: SimTime, node: u32, id: u32, out: &mut Vec<MacAction>) {
        let p = *self.packets.get(id);
        self.packets.deliver(id);
        if p.flow == NO_FLOW {
            return;
        }
        let delivered = match p.body {
            Body::Udp { .. } => p.payload_bytes as u64,
            Body::Tcp(seg) if seg.is_ack => {
                self.tcp_ack_arrived(now, p.flow, &seg, p.hops, out);
                return;
            }
            Body::Tcp(seg) => {
                let tcp = self.flows[p.flow as usize]
                    .tcp
                    .as_mut()
                    .expect("TCP segment for a TCP flow");
                let n = tcp.receiver.handle_segment(now, &seg);
                self.tcp_pump(now, p.flow, 1, node, out);
                n
            }
            // Routing and scheme messages are handled hop by hop, before this point.
            _ => return,
        };
        let spec = &self.sc.flows[p.flow as usize];
        let fs = &mut self.flows[p.flow as usize];
        fs.delivered += 1;
        fs.delay.record(now - p.created, u32::from(p.hops));
        if !self.routing.is_static() {
            fs.hops = Some(p.hops as u32);
        }
        if now >= spec.measure_from && now <= spec.stop {
            fs.window_bytes += delivered;
        }
        let bin = (now.as_nanos() / self.sc.series_bin.as_nanos()) as usize;
        if bin < self.n_bins {
            if bin >= fs.bins.len() {
                fs.bins.resize(bin + 1, 0);
            }
            fs.bins[bin] += delivered;
        }
    }

    /// Creates a packet at `node` and sends it down its own stack.
    pub(super) fn originate(&mut self, now: SimTime, node: u32, packet: Packet, out: &mut Vec<MacAction>) {
        let id = self.packets.create(packet);
        self.net_receive(now, node, id, None, out);
    }

    /// Runs `f` with an action buffer, then carries out the actions of `node`'s MAC.
    pub(super) fn with_out(&mut self, node: u32, f: impl FnOnce(&mut Self, &mut Vec<MacAction>)) {
        let mut out = std::mem::take(&mut self.scratch);
        f(self, &mut out);
        self.carry_out(node, None, out);
    }

    pub(super) fn app_send(&mut self, now: SimTime, flow: u32) {
        let spec = &self.sc.flows[flow as usize];
        let (src, dst, payload, stop) = (spec.src, spec.dst, spec.packet_bytes, spec.stop);
        let fs = &mut self.flows[flow as usize];
        if let Some(cbr) = fs.cbr.as_mut() {
            let seq = cbr.on_send();
            let next = cbr.next_send();
            fs.sent += 1;
            let packet = Packet {
                uid: 0,
                kind: PacketKind::Data,
                flow,
                src,
                dst,
                // ns-2's UDP agent counts no header; AODV adds IP's (not UDP's).
                bytes: if self.sc.ip_header_per_agent {
                    payload + IP_HEADER_BYTES
                } else {
                    payload + UDP_HEADER_BYTES + IP_HEADER_BYTES
                },
                payload_bytes: payload,
                created: now,
                ttl: DEFAULT_TTL,
                hops: 0,
                ff_run: 0,
                body: Body::Udp { seq },
            };
            self.with_out(src, |s, out| s.originate(now, src, packet, out));
            if let Some(t) = next {
                self.q.schedule(t, Event::AppSend { flow });
            }
            return;
        }
        let Some(tcp) = fs.tcp.as_mut() else { return };
        match fs.onoff.as_mut() {
            Some(onoff) => {
                if now >= stop {
                    return;
                }
                if let Some(req) = onoff.poll_request(now) {
                    tcp.sender.push_app_bytes(now, req.bytes);
                }
            }
            None => tcp.sender.set_backlogged(true),
        }
        self.with_out(src, |s, out| s.tcp_pump(now, flow, 0, src, out));
    }

    pub(super) fn app_stop(&mut self, _now: SimTime, flow: u32) {
        let fs = &mut self.flows[flow as usize];
        fs.onoff = None;
        if let Some(tcp) = fs.tcp.as_mut() {
            tcp.sender.set_backlogged(false);
        }
    }

    pub(super) fn tcp_ack_arrived(
        &mut self,
        now: SimTime,
        flow: u32,
        seg: &Segment,
        hops: u8,
        out: &mut Vec<MacAction>,
    ) {
        let src = self.sc.flows[flow as usize].src;
        let fs = &mut self.flows[flow as usize];
        let tcp = fs.tcp.as_mut().expect("TCP ACK for a TCP flow");
        tcp.sender.handle_ack_hops(now, seg, Some(hops));
        if let Some(onoff) = fs.onoff.as_mut() {
            if tcp.sender.all_acked() {
                onoff.handle_object_complete(now);
                if let Some(t) = onoff.poll_timeout() {
                    self.q.schedule(t.max(now), Event::AppSend { flow });
                }
            }
        }
        self.tcp_pump(now, flow, 0, src, out);
    }

    pub(super) fn tcp_timer(&mut self, now: SimTime, flow: u32, side: u8, gen: u32) {
        let Some(tcp) = self.flows[flow as usize].tcp.as_mut() else {
            return;
        };
        if !tcp.timers[side as usize].fire(gen) {
            return;
        }
        let spec = &self.sc.flows[flow as usize];
        let node = if side == 0 {
            tcp.sender.handle_timeout(now);
            spec.src
        } else {
            tcp.receiver.handle_timeout(now);
            spec.dst
        };
        self.with_out(node, |s, out| s.tcp_pump(now, flow, side, node, out));
    }

    /// Sends what a TCP endpoint has to send (side 0: data from the
    /// sender at `node`; side 1: ACKs from the receiver) and re-arms its timer.
    pub(super) fn tcp_pump(&mut self, now: SimTime, flow: u32, side: u8, node: u32, out: &mut Vec<MacAction>) {
        let spec = &self.sc.flows[flow as usize];
        let (from, to) = if side == 0 {
            (spec.src, spec.dst)
        } else {
            (spec.dst, spec.src)
        };
        debug_assert_eq!(from, node);
        loop {
            let tcp = self.flows[flow as usize].tcp.as_mut().expect("TCP flow");
            let seg = if side == 0 {
                tcp.sender.poll_transmit(now)
            } else {
                tcp.receiver.poll_transmit(now)
            };
            let Some(seg) = seg else { break };
            if side == 0 {
                self.flows[flow as usize].sent += 1;
            }
            let packet = Packet {
                uid: 0,
                kind: PacketKind::Data,
                flow,
                src: from,
                dst: to,
                bytes: seg.wire_bytes(),
                payload_bytes: seg.len,
                created: now,
                ttl: DEFAULT_TTL,
                hops: 0,
                ff_run: 0,
                body: Body::Tcp(seg),
            };
            self.originate(now, from, packet, out);
        }
        let tcp = self.flows[flow as usize].tcp.as_mut().expect("TCP flow");
        let want = if side == 0 {
            tcp.sender.poll_timeout()
        } else {
            tcp.receiver.poll_timeout()
        };
        if let Some((t, gen)) = tcp.timers[side as usize].rearm(want) {
            self.q.schedule(t.max(now), Event::TcpTimer { flow, side, gen });
        }
    }

    /// Runs `f` on the routing layer, carries out its actions at `node`
    /// and re-arms the node's routing timer.
    pub(super) fn with_routing<R>(
        &mut self,
        now: SimTime,
        node: u32,
        out: &mut Vec<MacAction>,
        f: impl FnOnce(&mut Routing, &mut Vec<RoutingAction>) -> R,
    ) -> R {
        let mut acts = std::mem::take(&mut self.routing_scratch);
        let r = f(&mut self.routing, &mut acts);
        for a in acts.drain(..) {
            match a {
                RoutingAction::Send {
                    packet,
                    next_hop,
                    jitter,
                } => {
                    let id = self.packets.create(packet);
                    if jitter == Duration::ZERO {
                        self.enqueue(now, node, id, next_hop, out);
                    } else {
                        self.q.schedule(now + jitter, Event::RoutingJitter { node, packet: id });
                    }
                }
                RoutingAction::Forward { packet, next_hop } => self.enqueue(now, node, packet, next_hop, out),
                RoutingAction::Drop { packet, cause } => {
                    self.drop_packet(node, packet, cause);
                }
            }
        }
        self.routing_scratch = acts;
        if let Some((t, gen)) = self.routing.rearm(node) {
            self.q.schedule(t.max(now), Event::RoutingTimer { node, gen });
        }
        r
    }

    /// The MAC gave up on `id` towards `next_hop` under a routing protocol
    /// that repairs (RFC 3561 §6.11): routing learns the link broke, and
    /// packets still queued for that neighbour are routed afresh (own
    /// packets wait for a new route, forwarded ones are dropped).
    pub(super) fn route_tx_failed(
        &mut self,
        now: SimTime,
        node: u32,
        id: u32,
        next_hop: u32,
        out: &mut Vec<MacAction>,
    ) {
        let p = *self.packets.get(id);
        // The next hop already has a data packet whose ACK was lost, or a
        // routing packet failed: only the link is news.
        let link_only = self.packets.is_handed_over(id) || p.body.routing_message().is_some();
        if link_only {
            self.drop_packet(node, id, DropCause::MacRetry);
        }
        let back = self.with_routing(now, node, out, |r, acts| {
            r.handle_tx_failed(now, node, id, &p, link_only, next_hop, acts)
        });
        if let Some(id) = back {
            self.drop_packet(node, id, DropCause::MacRetry);
        }
        let stranded = self.nodes[node as usize].queue.remove_for_next_hop(now, next_hop);
        let mut labels: Vec<u32> = stranded.iter().filter_map(|q| q.label).collect();
        for q in stranded {
            let p = *self.packets.get(q.packet);
            if p.is_control() {
                self.drop_packet(node, q.packet, DropCause::NoRoute);
            } else if let Some(nh) = self.with_routing(now, node, out, |r, acts| r.route(now, node, q.packet, &p, acts))
            {
                self.enqueue(now, node, q.packet, nh, out);
            }
        }
        // The labels' counts fell here, once each.
        labels.sort_unstable();
        labels.dedup();
        for label in labels {
            self.msdu_left(now, node, Some(label), out);
        }
    }

    pub(super) fn scheme_timer(&mut self, now: SimTime, node: u32, scheme: u8, kind: u8) {
        let mut acts = std::mem::take(&mut self.scheme_scratch);
        let view = View {
            nodes: &self.nodes,
            channel: &self.channel,
            flows: &self.sc.flows,
            end: self.sc.duration,
            bin: self.sc.series_bin,
        };
        self.schemes.on_timer(now, node, scheme, kind, &view, &mut acts);
        self.scheme_actions(now, acts);
    }

    /// Carries out what schemes asked for, then keeps the buffer.
    pub(super) fn scheme_actions(&mut self, now: SimTime, mut acts: Vec<SchemeAction>) {
        for a in acts.drain(..) {
            match a {
                SchemeAction::SetTimer { node, scheme, kind, at } => {
                    self.q.schedule(at, Event::SchemeTimer { node, scheme, kind });
                }
                SchemeAction::Send { node, packet, next_hop } => {
                    let id = self.packets.create(packet);
                    self.with_out(node, |s, out| s.enqueue(now, node, id, next_hop, out));
                }
                SchemeAction::SetShaper { node, flow, delta } => {
                    self.nodes[node as usize].queue.set_shaper(flow, delta);
                    self.with_out(node, |s, out| s.feed_mac(now, node, out));
                }
            }
        }
        self.scheme_scratch = acts;
    }

    /// Pushes the moving nodes' current positions to the channel, which
    /// refreshes the carrier-sense neighbour lists around them.
    pub(super) fn move_nodes(&mut self, now: SimTime) {
        let mut still = false;
        let mut moves = Vec::with_capacity(self.movers.len());
        for &i in &self.movers {
            let t = self.sc.trajectories[i as usize]
                .as_ref()
                .expect("movers have trajectories");
            if now <= t.last_motion() + self.sc.mobility_update {
                moves.push((i, t.position_at(now)));
                still |= now < t.last_motion();
            }
        }
        self.channel.set_positions(&moves);
        if still {
            self.q.schedule(now + self.sc.mobility_update, Event::Mobility);
        }
    }
}
