// ns-3 side of manetfair's speed/fidelity benchmark.
//
// Usage:
//   ns3bench run SCENARIO.txt [--seed N]   one scenario, one JSON line on stdout
//   ns3bench check                          radio range checks, one JSON line on stdout
//   ns3bench settings                       attribute values in effect, one JSON line
//
// The settings reproduce the classic ns-2 802.11b setup (250 m decode range,
// 550 m carrier sense, two-ray ground at 914 MHz); every value is listed in
// docs/benchmark.md. Scenario files are written by bench/run.py; their format:
//
//   name NAME
//   duration S
//   seed N
//   routing static|aodv
//   node ID X Y                  ids 0..n-1, in order
//   flow SRC DST START STOP      flow ids 0, 1, ... in file order
//   udpflow SRC DST START STOP KBPS   a constant-rate UDP flow (1000-byte
//                                     datagrams), also numbered in file order
//   nexthop NODE DST VIA         static host route at NODE towards DST
//   tcp newreno|westwood-plus    congestion control (default newreno)
//   queue PKTS                   interface queue capacity (default 50)
//   preamble_threshold DB        ThresholdPreambleDetectionModel::Threshold
//                                (default 10 dB; the reception comparison
//                                uses ns-3's own default, 4 dB)
//
// Blank lines and lines starting with '#' are ignored.

#include "ns3/aodv-module.h"
#include "ns3/applications-module.h"
#include "ns3/arp-cache.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/propagation-module.h"
#include "ns3/traffic-control-module.h"
#include "ns3/wifi-module.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// ns-2 reference radio (Pt 0.28183815 W, RXThresh 3.652e-10 W, CSThresh 1.559e-11 W),
// converted to ns-3 attributes as in the matching notes of docs/benchmark.md.
constexpr double kTxPowerDbm = 24.50;
constexpr double kRxSensitivityDbm = -78.49; // ns-3 adds 10log10(22/20) for DSSS: -78.07
constexpr double kCcaDbm = -78.08; // 550 m gives -78.0708 dBm, 551 m -78.1024 dBm
constexpr double kPreambleMinRssiDbm = -64.38; // 250 m gives -64.3741 dBm, 251 m -64.4434 dBm
constexpr double kPreambleThresholdDb = 10.0;
constexpr double kFrequencyHz = 914e6;
constexpr double kAntennaHeightM = 1.5;
constexpr double kTxRangeM = 250.0;
constexpr uint32_t kQueuePkts = 50;
constexpr uint32_t kMssBytes = 1000;
constexpr uint32_t kWindowPkts = 20;

struct Flow
{
    uint32_t src;
    uint32_t dst;
    double start;
    double stop;
    double udpKbps = 0.0; // > 0: a constant-rate UDP flow instead of TCP bulk transfer
};

struct NextHop
{
    uint32_t node;
    uint32_t dst;
    uint32_t via;
};

struct Scenario
{
    std::string name = "scenario";
    double duration = 0.0;
    uint32_t seed = 1;
    bool aodv = false;
    std::string tcp = "newreno";
    uint32_t queue = kQueuePkts;
    std::vector<Vector> positions;
    std::vector<Flow> flows;
    std::vector<NextHop> routes;
    double preambleThresholdDb = kPreambleThresholdDb;
};

[[noreturn]] void
Fail(const std::string& msg)
{
    std::cerr << "ns3bench: " << msg << "\n";
    std::exit(2);
}

Scenario
ReadScenario(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
    {
        Fail("cannot open " + path);
    }
    Scenario s;
    std::string line;
    uint32_t lineNo = 0;
    while (std::getline(in, line))
    {
        ++lineNo;
        std::istringstream is(line);
        std::string key;
        if (!(is >> key) || key[0] == '#')
        {
            continue;
        }
        bool ok = true;
        if (key == "name")
        {
            ok = static_cast<bool>(is >> s.name);
        }
        else if (key == "duration")
        {
            ok = static_cast<bool>(is >> s.duration) && s.duration > 0;
        }
        else if (key == "seed")
        {
            ok = static_cast<bool>(is >> s.seed) && s.seed > 0;
        }
        else if (key == "routing")
        {
            std::string kind;
            ok = static_cast<bool>(is >> kind) && (kind == "static" || kind == "aodv");
            s.aodv = kind == "aodv";
        }
        else if (key == "tcp")
        {
            ok = static_cast<bool>(is >> s.tcp) && (s.tcp == "newreno" || s.tcp == "westwood-plus");
        }
        else if (key == "queue")
        {
            ok = static_cast<bool>(is >> s.queue) && s.queue > 0;
        }
        else if (key == "node")
        {
            uint32_t id;
            double x;
            double y;
            ok = static_cast<bool>(is >> id >> x >> y) && id == s.positions.size();
            s.positions.emplace_back(x, y, 0.0);
        }
        else if (key == "flow")
        {
            Flow f;
            ok = static_cast<bool>(is >> f.src >> f.dst >> f.start >> f.stop) && f.stop > f.start;
            s.flows.push_back(f);
        }
        else if (key == "udpflow")
        {
            Flow f;
            ok = static_cast<bool>(is >> f.src >> f.dst >> f.start >> f.stop >> f.udpKbps) &&
                 f.stop > f.start && f.udpKbps > 0;
            s.flows.push_back(f);
        }
        else if (key == "preamble_threshold")
        {
            ok = static_cast<bool>(is >> s.preambleThresholdDb);
        }
        else if (key == "nexthop")
        {
            NextHop h;
            ok = static_cast<bool>(is >> h.node >> h.dst >> h.via);
            s.routes.push_back(h);
        }
        else
        {
            ok = false;
        }
        if (!ok)
        {
            Fail(path + ":" + std::to_string(lineNo) + ": cannot read '" + line + "'");
        }
    }
    const auto n = s.positions.size();
    for (const auto& f : s.flows)
    {
        if (f.src >= n || f.dst >= n || f.src == f.dst)
        {
            Fail(path + ": flow endpoints must be distinct node ids below " + std::to_string(n));
        }
    }
    for (const auto& h : s.routes)
    {
        if (h.node >= n || h.dst >= n || h.via >= n)
        {
            Fail(path + ": nexthop names a node id >= " + std::to_string(n));
        }
    }
    if (s.duration <= 0)
    {
        Fail(path + ": duration missing");
    }
    return s;
}

/// Global attribute defaults shared by every run: MAC queue and TCP.
void
SetDefaults()
{
    // ns-2's 50-packet DropTail interface queue; no age-based drops.
    Config::SetDefault("ns3::WifiMacQueue::MaxSize",
                       QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, kQueuePkts)));
    Config::SetDefault("ns3::WifiMacQueue::MaxDelay", TimeValue(Seconds(1e6)));

    // NewReno as in ns-2's Agent/TCP/Newreno with a 20-packet window:
    // no SACK, no timestamps, no limited transmit, classic fast recovery.
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(kMssBytes));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(kWindowPkts * kMssBytes));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(100)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(1.0)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(10)));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(1.0)));
}

/// Nodes with 802.11b ad hoc devices, the TCP/IP stack without a queue disc,
/// and the chosen routing.
struct Network
{
    NodeContainer nodes;
    NetDeviceContainer devices;
    Ipv4InterfaceContainer interfaces;
};

Network
BuildNetwork(const std::vector<Vector>& positions,
             bool aodv,
             double preambleThresholdDb = kPreambleThresholdDb)
{
    Network net;
    net.nodes.Create(positions.size());

    auto alloc = CreateObject<ListPositionAllocator>();
    for (const auto& p : positions)
    {
        alloc->Add(p);
    }
    MobilityHelper mobility;
    mobility.SetPositionAllocator(alloc);
    mobility.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mobility.Install(net.nodes);

    YansWifiChannelHelper channel;
    channel.SetPropagationDelay("ns3::ConstantSpeedPropagationDelayModel");
    channel.AddPropagationLoss("ns3::TwoRayGroundPropagationLossModel",
                               "Frequency",
                               DoubleValue(kFrequencyHz),
                               "SystemLoss",
                               DoubleValue(1.0),
                               "HeightAboveZ",
                               DoubleValue(kAntennaHeightM));

    YansWifiPhyHelper phy;
    phy.SetChannel(channel.Create());
    phy.Set("TxPowerStart", DoubleValue(kTxPowerDbm));
    phy.Set("TxPowerEnd", DoubleValue(kTxPowerDbm));
    phy.Set("TxPowerLevels", UintegerValue(1));
    phy.Set("TxGain", DoubleValue(0.0));
    phy.Set("RxGain", DoubleValue(0.0));
    phy.Set("RxSensitivity", DoubleValue(kRxSensitivityDbm));
    phy.Set("CcaEdThreshold", DoubleValue(kCcaDbm));
    phy.Set("CcaSensitivity", DoubleValue(kCcaDbm));
    phy.SetPreambleDetectionModel("ns3::ThresholdPreambleDetectionModel",
                                  "MinimumRssi",
                                  DoubleValue(kPreambleMinRssiDbm),
                                  "Threshold",
                                  DoubleValue(preambleThresholdDb));

    WifiHelper wifi;
    wifi.SetStandard(WIFI_STANDARD_80211b);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode",
                                 StringValue("DsssRate2Mbps"),
                                 "ControlMode",
                                 StringValue("DsssRate1Mbps"),
                                 "NonUnicastMode",
                                 StringValue("DsssRate1Mbps"),
                                 "RtsCtsThreshold",
                                 UintegerValue(0));
    WifiMacHelper mac;
    mac.SetType("ns3::AdhocWifiMac");
    net.devices = wifi.Install(phy, mac, net.nodes);

    InternetStackHelper internet;
    Ipv4StaticRoutingHelper staticRouting;
    AodvHelper aodvHelper;
    // ns-2's AODV detects broken links from MAC feedback, without HELLOs.
    aodvHelper.Set("EnableHello", BooleanValue(false));
    if (aodv)
    {
        internet.SetRoutingHelper(aodvHelper);
    }
    else
    {
        internet.SetRoutingHelper(staticRouting);
    }
    internet.Install(net.nodes);

    Ipv4AddressHelper address;
    address.SetBase("10.0.0.0", "255.0.0.0");
    net.interfaces = address.Assign(net.devices);

    // The wifi MAC queue is then the only interface queue, as ns-2's IFQ.
    TrafficControlHelper tch;
    tch.Uninstall(net.devices);

    // ARP entries for every pair within decode range, so that no ARP exchange
    // happens (ns-2 scenarios are compared after ARP has settled).
    const auto n = positions.size();
    for (uint32_t i = 0; i < n; ++i)
    {
        auto cache = net.nodes.Get(i)->GetObject<Ipv4L3Protocol>()->GetInterface(1)->GetArpCache();
        for (uint32_t j = 0; j < n; ++j)
        {
            if (i == j)
            {
                continue;
            }
            const double dx = positions[i].x - positions[j].x;
            const double dy = positions[i].y - positions[j].y;
            if (dx * dx + dy * dy <= kTxRangeM * kTxRangeM * 1.0001)
            {
                auto* entry = cache->Add(net.interfaces.GetAddress(j));
                entry->SetMacAddress(net.devices.Get(j)->GetAddress());
                entry->MarkPermanent();
            }
        }
    }
    return net;
}

struct FlowStats
{
    double start;
    double stop;
    uint64_t windowBytes = 0;
    uint64_t totalBytes = 0;
};

void
OnSinkRx(FlowStats* stats, Ptr<const Packet> packet, const Address& /* from */)
{
    const double now = Simulator::Now().GetSeconds();
    stats->totalBytes += packet->GetSize();
    if (now >= stats->start && now <= stats->stop)
    {
        stats->windowBytes += packet->GetSize();
    }
}

/// One stderr line per simulated second, so that a run stopped for taking too
/// long still tells how far it got (adds one event per simulated second).
void
ReportProgress()
{
    std::cerr << "progress " << Simulator::Now().GetSeconds() << std::endl;
    Simulator::Schedule(Seconds(1.0), &ReportProgress);
}

double
PeakRssMb()
{
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

std::string
JsonString(const std::string& s)
{
    std::string out = "\"";
    for (char c : s)
    {
        if (c == '"' || c == '\\')
        {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

int
RunScenario(const std::string& path, int64_t seedOverride)
{
    const auto wallStart = std::chrono::steady_clock::now();
    Scenario s = ReadScenario(path);
    if (seedOverride > 0)
    {
        s.seed = static_cast<uint32_t>(seedOverride);
    }
    // One fixed seed and the run number as the replication index: ns-3's
    // recommended way to get independent replications.
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(s.seed);
    SetDefaults();
    if (s.tcp == "westwood-plus")
    {
        // ns-3's Westwood+ (NewReno recovery, Tustin-filtered per-RTT samples).
        Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                           TypeIdValue(TcpWestwoodPlus::GetTypeId()));
    }
    Config::SetDefault("ns3::WifiMacQueue::MaxSize",
                       QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, s.queue)));

    Network net = BuildNetwork(s.positions, s.aodv, s.preambleThresholdDb);

    if (!s.aodv)
    {
        Ipv4StaticRoutingHelper helper;
        for (const auto& h : s.routes)
        {
            auto routing = helper.GetStaticRouting(net.nodes.Get(h.node)->GetObject<Ipv4>());
            routing->AddHostRouteTo(net.interfaces.GetAddress(h.dst),
                                    net.interfaces.GetAddress(h.via),
                                    1);
        }
    }

    std::vector<FlowStats> stats(s.flows.size());
    for (size_t i = 0; i < s.flows.size(); ++i)
    {
        const auto& f = s.flows[i];
        stats[i].start = f.start;
        stats[i].stop = f.stop;
        const uint16_t port = static_cast<uint16_t>(5000 + i % 60000);

        const bool udp = f.udpKbps > 0.0;
        const std::string factory = udp ? "ns3::UdpSocketFactory" : "ns3::TcpSocketFactory";
        PacketSinkHelper sink(factory, InetSocketAddress(Ipv4Address::GetAny(), port));
        auto sinkApps = sink.Install(net.nodes.Get(f.dst));
        sinkApps.Start(Seconds(0.0));
        sinkApps.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSinkRx, &stats[i]));

        const auto to = InetSocketAddress(net.interfaces.GetAddress(f.dst), port);
        ApplicationContainer sourceApps;
        if (udp)
        {
            // Constant bit rate: kMssBytes-byte datagrams, always on.
            OnOffHelper source(factory, to);
            source.SetConstantRate(DataRate(static_cast<uint64_t>(f.udpKbps * 1000.0)),
                                   kMssBytes);
            sourceApps = source.Install(net.nodes.Get(f.src));
        }
        else
        {
            BulkSendHelper source(factory, to);
            source.SetAttribute("MaxBytes", UintegerValue(0));
            source.SetAttribute("SendSize", UintegerValue(kMssBytes));
            sourceApps = source.Install(net.nodes.Get(f.src));
        }
        sourceApps.Start(Seconds(f.start));
        sourceApps.Stop(Seconds(f.stop));
    }

    Simulator::Schedule(Seconds(1.0), &ReportProgress);
    const auto runStart = std::chrono::steady_clock::now();
    Simulator::Stop(Seconds(s.duration));
    Simulator::Run();
    const auto runEnd = std::chrono::steady_clock::now();
    const uint64_t events = Simulator::GetEventCount();
    const double simulated = Simulator::Now().GetSeconds();
    Simulator::Destroy();
    const auto wallEnd = std::chrono::steady_clock::now();

    std::ostringstream out;
    out.precision(10);
    double aggregate = 0.0;
    out << "{\"simulator\": \"ns-3.44\", \"name\": " << JsonString(s.name) << ", \"tcp\": \"" << s.tcp
        << "\", \"seed\": " << s.seed
        << ", \"nodes\": " << s.positions.size() << ", \"routing\": \""
        << (s.aodv ? "aodv" : "static") << "\", \"duration_s\": " << s.duration
        << ", \"simulated_s\": " << simulated << ", \"events\": " << events
        << ", \"run_wall_s\": " << std::chrono::duration<double>(runEnd - runStart).count()
        << ", \"wall_s\": " << std::chrono::duration<double>(wallEnd - wallStart).count()
        << ", \"peak_rss_mb\": " << PeakRssMb() << ", \"flows\": [";
    for (size_t i = 0; i < s.flows.size(); ++i)
    {
        const auto& f = s.flows[i];
        const double kbps = static_cast<double>(stats[i].windowBytes) * 8.0 / 1000.0 /
                            (f.stop - f.start);
        aggregate += kbps;
        out << (i ? ", " : "") << "{\"id\": " << i << ", \"src\": " << f.src
            << ", \"dst\": " << f.dst << ", \"throughput_kbps\": " << kbps
            << ", \"delivered_bytes\": " << stats[i].totalBytes << "}";
    }
    out << "], \"aggregate_kbps\": " << aggregate << "}";
    std::cout << out.str() << std::endl;
    return 0;
}

// ---------------------------------------------------------------------------
// Range checks: do frames decode at a distance, and does carrier sense reach it?

uint32_t g_received = 0;
uint32_t g_txBegins[2] = {0, 0};

void
OnPhyTxBegin(uint32_t* counter, Ptr<const Packet>, double)
{
    ++*counter;
}

/// Counts frames each of the two nodes puts on the air.
void
CountTxFrames(const Network& net)
{
    for (uint32_t i = 0; i < 2; ++i)
    {
        g_txBegins[i] = 0;
        DynamicCast<WifiNetDevice>(net.devices.Get(i))
            ->GetPhy()
            ->TraceConnectWithoutContext("PhyTxBegin",
                                         MakeBoundCallback(&OnPhyTxBegin, &g_txBegins[i]));
    }
}

void
OnUdpRx(Ptr<Socket> socket)
{
    while (socket->Recv())
    {
        ++g_received;
    }
}

void
SendBurst(Ptr<Socket> socket, Address to, uint32_t left, Time gap, uint32_t bytes)
{
    if (left == 0)
    {
        return;
    }
    socket->SendTo(Create<Packet>(bytes), 0, to);
    Simulator::Schedule(gap, &SendBurst, socket, to, left - 1, gap, bytes);
}

/// Packets of a 100-packet UDP flow from node 0 to node 1 at distance d that
/// node 1's application receives (broadcast or unicast with RTS/CTS).
uint32_t
DecodeCount(double d, bool broadcast)
{
    Network net = BuildNetwork({Vector(0, 0, 0), Vector(d, 0, 0)}, false);
    CountTxFrames(net);
    g_received = 0;
    const uint16_t port = 9;
    auto rx = Socket::CreateSocket(net.nodes.Get(1), UdpSocketFactory::GetTypeId());
    rx->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    rx->SetRecvCallback(MakeCallback(&OnUdpRx));
    auto tx = Socket::CreateSocket(net.nodes.Get(0), UdpSocketFactory::GetTypeId());
    tx->SetAllowBroadcast(true);
    Address to = broadcast ? InetSocketAddress(Ipv4Address("10.255.255.255"), port)
                           : InetSocketAddress(net.interfaces.GetAddress(1), port);
    if (!broadcast)
    {
        // A unicast route and ARP entry, so that an out-of-range peer is still tried.
        Ipv4StaticRoutingHelper helper;
        helper.GetStaticRouting(net.nodes.Get(0)->GetObject<Ipv4>())
            ->AddHostRouteTo(net.interfaces.GetAddress(1), 1);
        auto cache =
            net.nodes.Get(0)->GetObject<Ipv4L3Protocol>()->GetInterface(1)->GetArpCache();
        if (!cache->Lookup(net.interfaces.GetAddress(1)))
        {
            auto* e = cache->Add(net.interfaces.GetAddress(1));
            e->SetMacAddress(net.devices.Get(1)->GetAddress());
            e->MarkPermanent();
        }
    }
    Simulator::Schedule(Seconds(1.0), &SendBurst, tx, to, 100, MilliSeconds(50), 500);
    Simulator::Stop(Seconds(10.0));
    Simulator::Run();
    Simulator::Destroy();
    return g_received;
}

/// Frames two saturated broadcast senders at distance d put on the air in 2 s,
/// summed: about one sender's worth when they defer to each other, two when not.
uint32_t
SharedAirtimeFrames(double d)
{
    Network net = BuildNetwork({Vector(0, 0, 0), Vector(d, 0, 0)}, false);
    CountTxFrames(net);
    for (uint32_t i = 0; i < 2; ++i)
    {
        auto tx = Socket::CreateSocket(net.nodes.Get(i), UdpSocketFactory::GetTypeId());
        tx->SetAllowBroadcast(true);
        Address to = InetSocketAddress(Ipv4Address("10.255.255.255"), 9);
        // One 1000-byte frame lasts ~8.4 ms at 1 Mbit/s: a packet every 2 ms saturates.
        Simulator::Schedule(Seconds(1.0 + 0.0001 * i),
                            &SendBurst,
                            tx,
                            to,
                            2000,
                            MilliSeconds(2),
                            1000);
    }
    Simulator::Stop(Seconds(3.0));
    Simulator::Run();
    Simulator::Destroy();
    return g_txBegins[0] + g_txBegins[1];
}

int
RunCheck()
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
    SetDefaults();
    std::ostringstream out;
    out << "{\"decode\": [";
    const double decodeAt[] = {240.0, 250.0, 251.0, 260.0};
    bool first = true;
    for (double d : decodeAt)
    {
        out << (first ? "" : ", ") << "{\"distance_m\": " << d
            << ", \"sent\": 100, \"broadcast_received\": " << DecodeCount(d, true);
        out << ", \"unicast_received\": " << DecodeCount(d, false);
        // With RTS/CTS: RTS + DATA from the sender, CTS + ACK from the receiver per packet.
        out << ", \"unicast_frames_sender\": " << g_txBegins[0]
            << ", \"unicast_frames_receiver\": " << g_txBegins[1] << "}";
        first = false;
    }
    const uint32_t alone = SharedAirtimeFrames(1e5) / 2;
    out << "], \"carrier_sense\": {\"one_sender_frames\": " << alone << ", \"pairs\": [";
    const double senseAt[] = {540.0, 550.0, 551.0, 560.0};
    first = true;
    for (double d : senseAt)
    {
        out << (first ? "" : ", ") << "{\"distance_m\": " << d
            << ", \"both_senders_frames\": " << SharedAirtimeFrames(d) << "}";
        first = false;
    }
    out << "]}}";
    std::cout << out.str() << std::endl;
    return 0;
}

/// Prints the attribute values in effect on a built network, read back from the
/// objects, so that docs/benchmark.md can be checked against the program.
int
PrintSettings()
{
    SetDefaults();
    Network net = BuildNetwork({Vector(0, 0, 0), Vector(100, 0, 0)}, false);
    auto dev = DynamicCast<WifiNetDevice>(net.devices.Get(0));
    auto tcp = Socket::CreateSocket(net.nodes.Get(0), TcpSocketFactory::GetTypeId());
    const std::vector<std::pair<Ptr<Object>, std::vector<std::string>>> objects = {
        {dev->GetPhy(),
         {"TxPowerStart", "TxPowerEnd", "TxPowerLevels", "TxGain", "RxGain", "RxSensitivity",
          "CcaEdThreshold", "CcaSensitivity", "RxNoiseFigure", "ChannelWidth", "Slot", "Sifs"}},
        {dev->GetRemoteStationManager(),
         {"DataMode", "ControlMode", "NonUnicastMode", "RtsCtsThreshold",
          "FragmentationThreshold"}},
        {dev->GetMac(), {"QosSupported", "FrameRetryLimit"}},
        {dev->GetMac()->GetTxop(), {"MinCws", "MaxCws", "Aifsns"}},
        {dev->GetMac()->GetTxop()->GetWifiMacQueue(), {"MaxSize"}},
        {tcp,
         {"SegmentSize", "InitialCwnd", "RcvBufSize", "SndBufSize", "DelAckCount",
          "DelAckTimeout", "Sack", "Timestamp", "LimitedTransmit", "MinRto", "ClockGranularity",
          "ConnTimeout", "DataRetries", "WindowScaling"}},
    };
    // WifiPhy has no getter for its preamble detection model: the values given to the helper.
    std::cout << "{\"ns3::ThresholdPreambleDetectionModel::MinimumRssi\": \""
              << kPreambleMinRssiDbm << "\", \"ns3::ThresholdPreambleDetectionModel::Threshold\": \""
              << kPreambleThresholdDb << "\"";
    bool first = false;
    for (const auto& [obj, names] : objects)
    {
        for (const auto& name : names)
        {
            StringValue v;
            if (!obj->GetAttributeFailSafe(name, v))
            {
                continue;
            }
            std::cout << (first ? "" : ", ") << JsonString(obj->GetInstanceTypeId().GetName() +
                                                           "::" + name)
                      << ": " << JsonString(v.Get());
            first = false;
        }
    }
    std::cout << ", \"ns3::WifiMacQueue::MaxDelay\": \""
              << dev->GetMac()->GetTxop()->GetWifiMacQueue()->GetMaxDelay().As(Time::S) << "\"";
    std::cout << "}" << std::endl;
    Simulator::Destroy();
    return 0;
}

} // namespace

int
main(int argc, char** argv)
{
    const std::string usage = "usage: ns3bench run SCENARIO.txt [--seed N] | ns3bench check";
    if (argc < 2)
    {
        Fail(usage);
    }
    const std::string cmd = argv[1];
    if (cmd == "check" && argc == 2)
    {
        return RunCheck();
    }
    if (cmd == "settings" && argc == 2)
    {
        return PrintSettings();
    }
    if (cmd == "run" && (argc == 3 || argc == 5))
    {
        int64_t seed = 0;
        if (argc == 5)
        {
            if (std::string(argv[3]) != "--seed")
            {
                Fail(usage);
            }
            seed = std::stoll(argv[4]);
        }
        return RunScenario(argv[2], seed);
    }
    Fail(usage);
}
