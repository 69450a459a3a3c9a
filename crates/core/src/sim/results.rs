//! What a run records and reports: captures (pcap, per-node pcap), the
//! packet-event trace and the probe, the per-bin samples, and the summary
//! and traces at the end.

use super::*;

impl Simulator {
    /// Starts recording transmissions and receptions (for invariant tests).
    pub fn enable_probe(&mut self) {
        self.probe = Some(Probe::default());
        self.watched = true;
    }

    /// Starts a pcap capture of every frame put on the air, keeping at
    /// most `snaplen` bytes of each.
    pub fn enable_pcap(&mut self, snaplen: usize) {
        self.pcap = Some(crate::trace::pcap::PcapWriter::new(snaplen));
        self.watched = true;
    }

    /// Starts the packet-event trace (crate::trace::events), keeping the
    /// events `filter` selects; node ids are written as the scenario's.
    pub fn enable_trace(&mut self, filter: crate::trace::events::Filter) {
        let labels = self.sc.node_ids.clone();
        self.trace = Some(crate::trace::events::TraceSink::new(filter, labels));
        self.watched = true;
    }

    /// The trace's JSON lines recorded since the last call.
    pub fn take_trace(&mut self) -> Vec<u8> {
        self.trace.as_mut().map(|t| t.take()).unwrap_or_default()
    }

    /// Starts a capture of what node `label` (the scenario's id) sees on
    /// its own interface, as ns-3's per-device pcap: the frames it sends,
    /// stamped at their start, and the frames addressed to it (or broadcast)
    /// that it decodes, stamped at their end, with the power it received.
    /// What the MAC does on its own stays inside it, as on a real station:
    /// a data frame's retransmissions (§9.2.4: same MSDU, retry bit set) are
    /// left out on the sending side, and a retransmitted copy of an MSDU
    /// already taken in on the receiving side; so are frames overheard for
    /// others. A TCP stream's segments then appear once per TCP
    /// transmission, and Wireshark's TCP analysis counts the sender's own
    /// retransmissions. Returns the capture's index for `take_node_pcap`,
    /// or an error for an unknown id.
    pub fn enable_node_pcap(&mut self, label: i64, snaplen: usize) -> Result<usize, String> {
        let node = self
            .sc
            .node_ids
            .iter()
            .position(|&l| l == label)
            .ok_or_else(|| format!("--pcap-node {label}: no such node in the scenario"))?;
        self.node_pcaps
            .push((node as u32, crate::trace::pcap::PcapWriter::new(snaplen)));
        self.watched = true;
        Ok(self.node_pcaps.len() - 1)
    }

    /// The bytes of node capture `i` since the last call (the header first).
    pub fn take_node_pcap(&mut self, i: usize) -> Vec<u8> {
        self.node_pcaps.get_mut(i).map(|(_, w)| w.take()).unwrap_or_default()
    }

    /// Records `frame` in the captures of `node`, if any.
    #[inline(never)]
    pub(super) fn node_pcap_record(&mut self, now: SimTime, node: u32, air: u32, received: bool) {
        let a = &self.air[air as usize];
        if received && a.frame.rx != node && a.frame.rx != BROADCAST {
            return;
        }
        if let Some(m) = a.frame.msdu.filter(|_| a.frame.retry) {
            if !received || self.packets.is_handed_over(m.packet) {
                return;
            }
        }
        let msg = a
            .packet
            .as_ref()
            .and_then(|p| p.body.routing_message())
            .map(|m| self.routing.message(m));
        let power = received
            .then(|| self.channel.neighbors(a.frame.tx).iter().find(|nb| nb.node == node))
            .flatten()
            .map(|nb| nb.power_w);
        for (n, w) in self.node_pcaps.iter_mut().filter(|(n, _)| *n == node) {
            debug_assert_eq!(*n, node);
            let ticket = w.record_pending(now, &a.frame, a.packet.as_ref(), msg, power);
            w.resolve(ticket, true);
        }
    }

    /// The pcap bytes captured since the last call (the file header first).
    pub fn take_pcap(&mut self) -> Vec<u8> {
        let finished = self.finished;
        self.pcap
            .as_mut()
            .map(|w| {
                if finished {
                    w.flush();
                }
                w.take()
            })
            .unwrap_or_default()
    }

    /// The probe's records, if `enable_probe` was called.
    pub fn probe(&self) -> Option<&Probe> {
        self.probe.as_ref()
    }

    pub(super) fn sample(&mut self, now: SimTime) {
        if self.sc.node_series {
            let span = (now - self.bin_start).as_secs_f64();
            for (i, n) in self.nodes.iter_mut().enumerate() {
                let idle = n.radio.time_in(RadioState::Idle, now);
                let nav = n.mac.nav().busy_time(now);
                let q = n.queue.take_mean_len(now, self.bin_start);
                self.traces.queue_len_pkts[i].push(q);
                self.traces.radio_busy_frac[i].push(1.0 - (idle - n.idle_at_bin).as_secs_f64() / span);
                self.traces.nav_busy_frac[i].push((nav - n.nav_at_bin).as_secs_f64() / span);
                n.idle_at_bin = idle;
                n.nav_at_bin = nav;
            }
        }
        if !self.schemes.is_empty() {
            let view = View {
                nodes: &self.nodes,
                channel: &self.channel,
                flows: &self.sc.flows,
                end: self.sc.duration,
                bin: self.sc.series_bin,
            };
            self.schemes.on_bin(now, &view);
        }
        for (fs, tr) in self.flows.iter_mut().zip(self.traces.tcp.iter_mut()) {
            if let (Some(tcp), Some(tr)) = (&fs.tcp, tr.as_mut()) {
                tr.cwnd_pkts.push(tcp.sender.cwnd_pkts());
                tr.ssthresh_pkts.push(tcp.sender.ssthresh_pkts());
                tr.srtt_s.push(tcp.sender.srtt().map(|d| d.as_secs_f64()));
                tr.rttvar_s.push(tcp.sender.rttvar().map(|d| d.as_secs_f64()));
                // Counts per bin, from the sender's running totals.
                let st = tcp.sender.stats();
                tr.timeouts.push(st.timeouts - fs.tcp_marked[0]);
                tr.fast_retransmits.push(st.fast_retransmits - fs.tcp_marked[1]);
                fs.tcp_marked = [st.timeouts, st.fast_retransmits];
            }
        }
        self.bin_start = now;
        if now + self.sc.series_bin < self.sc.duration {
            self.q.schedule(now + self.sc.series_bin, Event::Sample);
        }
    }

    /// Closes the last (possibly partial) trace bin at the end of the run.
    pub(super) fn finish(&mut self) {
        if !self.finished {
            self.finished = true;
            if self.bin_start < self.sc.duration {
                self.sample(self.sc.duration);
            }
            for fs in &mut self.flows {
                fs.bins.resize(self.n_bins, 0);
            }
        }
    }

    /// The run summary; `wall_s` is filled in by the caller, who owns the clock.
    pub fn summary(&self, wall_s: f64) -> Summary {
        let bin_s = self.sc.series_bin.as_secs_f64();
        let flows: Vec<FlowSummary> = self
            .sc
            .flows
            .iter()
            .zip(&self.flows)
            .enumerate()
            .map(|(i, (spec, fs))| {
                let window = (spec.stop - spec.measure_from).as_secs_f64();
                FlowSummary {
                    id: i as u32,
                    src: self.sc.node_ids[spec.src as usize],
                    dst: self.sc.node_ids[spec.dst as usize],
                    transport: spec.transport.name().to_string(),
                    hops: fs.hops,
                    throughput_kbps: fs.window_bytes as f64 * 8.0 / 1000.0 / window,
                    delivered_bytes: fs.window_bytes,
                    series_kbps: fs.bins.iter().map(|&b| b as f64 * 8.0 / 1000.0 / bin_s).collect(),
                    packets_sent: fs.sent,
                    packets_delivered: fs.delivered,
                    mean_delay_s: (fs.delivered > 0).then(|| fs.delay.sum.as_secs_f64() / fs.delivered as f64),
                    delay: fs.delay.summary(),
                    losses: DropCause::ALL
                        .iter()
                        // The causes of the run's `drops`.
                        .filter(|c| **c != DropCause::Arp || self.sc.arp)
                        .map(|c| (c.name(), fs.losses[*c as usize]))
                        .collect(),
                    tcp: fs.tcp.as_ref().map(|t| {
                        let st = t.sender.stats();
                        TcpFlowSummary {
                            data_segments: st.data_segments,
                            retransmitted_segments: st.retransmitted_segments,
                            fast_retransmits: st.fast_retransmits,
                            timeouts: st.timeouts,
                        }
                    }),
                }
            })
            .collect();
        let tputs: Vec<f64> = flows.iter().map(|f| f.throughput_kbps).collect();
        let sent: u64 = flows.iter().map(|f| f.packets_sent).sum();
        let delivered: u64 = flows.iter().map(|f| f.packets_delivered).sum();
        let loss_pct = if sent == 0 {
            0.0
        } else {
            100.0 * sent.saturating_sub(delivered) as f64 / sent as f64
        };
        let mut mac = MacSummary::default();
        for t in self.link.frame_types() {
            mac.frames_sent.insert(t.name(), self.counters.frames_sent[t.index()]);
            mac.collisions.insert(t.name(), self.counters.collisions[t.index()]);
        }
        mac.retry_drops = self.nodes.iter().map(|n| n.mac.stats.retry_drops).sum();
        mac.duplicates = self.nodes.iter().map(|n| n.mac.stats.duplicates).sum();
        self.link.summary(self.q.now(), &self.nodes, &mut mac);
        if self.sc.dcf.count_first_rts {
            mac.msdus_started = Some(self.nodes.iter().map(|n| n.mac.stats.msdus_started).sum());
            mac.first_rts_failed = Some(self.nodes.iter().map(|n| n.mac.stats.first_rts_failed).sum());
        }
        let l = &self.packets.ledger;
        let routing = self
            .routing
            .summary(crate::scenario::Named::name(self.sc.routing).to_string());
        let mut schemes = SchemeSections::default();
        let view = View {
            nodes: &self.nodes,
            channel: &self.channel,
            flows: &self.sc.flows,
            end: self.sc.duration,
            bin: self.sc.series_bin,
        };
        self.schemes.summary(&view, &tputs, &mut schemes);
        Summary {
            name: self.sc.name.clone(),
            seed: self.sc.seed,
            duration_s: self.sc.duration.as_secs_f64(),
            wall_s,
            events: self.q.events_popped(),
            aggregate_kbps: tputs.iter().sum(),
            jain_index: jain_index(&tputs),
            loss_pct,
            equal_share_unfairness: crate::metrics::equal_share_unfairness(&tputs),
            unfairness_index: crate::metrics::equal_share_unfairness(&tputs),
            maxmin_unfairness: schemes.maxmin_unfairness(),
            flows,
            mac,
            drops: crate::net::DropCause::ALL
                .iter()
                // ARP drops exist only where ns-2's ARP runs.
                .filter(|c| **c != DropCause::Arp || self.sc.arp)
                .map(|c| (c.name(), l.dropped[*c as usize]))
                .collect(),
            ledger: LedgerSummary {
                generated: l.generated,
                delivered: l.delivered,
                dropped: l.dropped_total(),
                in_flight: l.in_flight(),
                balanced: self.packets.balanced(),
            },
            routing,
            nodes: self.nodes.len(),
            simulator: format!("manetfair {}", env!("CARGO_PKG_VERSION")),
            schemes,
        }
    }

    /// The run's time series: per flow, per node (when asked) and the schemes' own, in the scenario's node order.
    pub fn traces(&self) -> Traces {
        let mut t = self.traces.clone();
        self.schemes.traces(&mut t);
        let bins = self.flows.first().map(|f| f.bins.len()).unwrap_or(self.n_bins);
        let bin_s = self.sc.series_bin.as_secs_f64();
        let bin_ns = self.sc.series_bin.as_nanos();
        t.time_s = (0..bins).map(|i| (i as u64 * bin_ns) as f64 / 1e9).collect();
        t.flow_throughput_kbps = self
            .flows
            .iter()
            .map(|f| f.bins.iter().map(|&b| b as f64 * 8.0 / 1000.0 / bin_s).collect())
            .collect();
        // Per-node series in the scenario's own order (large fields are
        // stored in spatial order internally).
        {
            let order: Vec<usize> = self.sc.file_order.iter().map(|&i| i as usize).collect();
            for series in [&mut t.queue_len_pkts, &mut t.radio_busy_frac, &mut t.nav_busy_frac] {
                if series.len() == order.len() {
                    let mut taken = std::mem::take(series);
                    *series = order.iter().map(|&i| std::mem::take(&mut taken[i])).collect();
                }
            }
        }
        t
    }

    /// Whether every packet is accounted for (checked at the end of every run).
    pub fn ledger_balanced(&self) -> bool {
        self.packets.balanced()
    }
}
