// Static routing for ns-2.35's wireless nodes, loaded into the stock `ns` binary.
//
// ns-2.35 as packaged has no working static routing for mobile nodes: NOAH is not
// compiled in, the ManualRtg hook names a class that does not exist, and DumbAgent
// does not forward. This agent takes its next hops from a table written by the
// Tcl script and forwards like dsdv/dsdv.cc's recv() (ns-2.35 :1000-1040): the
// source adds the IP header once, relays decrement the TTL. ns-2's TCP agents
// already count 40 bytes of TCP/IP header in every segment, so, as aodv/aodv.cc
// does (:577-583), the 20-byte IP header is added to the other packets only;
// `tcpIpHeader_ 1` adds it to TCP segments and ACKs too, as DSDV and NOAH do.
//
// The next hop goes to LL as a MAC address (addr_type NS_AF_ILINK, mac/ll.cc
// sendDown), so no ARP request is ever sent: a mobile node's MAC address is its
// node id when every node has one interface and nodes are created in id order
// (mac/mac.cc: index_ = MacIndex++).
//
// One helper rides along for the harness:
//   ARPFill       fills an ARP table before the run (mac/arp.cc arpinput), so that
//                 a protocol that resolves next hops by ARP (AODV) starts with every
//                 neighbour known.
//
// Build: see bench/ns2/Makefile; load: `load ./static_route.so Staticroute`.

#include <cstring>
#include <map>

#include <tcl.h>

#include "agent.h"
#include "arp.h"
#include "classifier-port.h"
#include "cmu-trace.h"
#include "ip.h"
#include "ll.h"
#include "mac.h"
#include "packet.h"

namespace {

class StaticRouteAgent : public Agent {
 public:
  StaticRouteAgent() : Agent(PT_MESSAGE), myaddr_(0), port_dmux_(0), tcp_ip_header_(0) {
    bind("tcpIpHeader_", &tcp_ip_header_);
  }

  int command(int argc, const char* const* argv) override {
    Tcl& tcl = Tcl::instance();
    if (argc == 3 && std::strcmp(argv[1], "addr") == 0) {
      myaddr_ = Address::instance().str2addr(argv[2]);
      return TCL_OK;
    }
    if (argc == 3 && std::strcmp(argv[1], "port-dmux") == 0) {
      port_dmux_ = static_cast<NsObject*>(TclObject::lookup(argv[2]));
      if (port_dmux_ == 0) {
        tcl.resultf("port-dmux: no object %s", argv[2]);
        return TCL_ERROR;
      }
      return TCL_OK;
    }
    if (argc == 3 && std::strcmp(argv[1], "tracetarget") == 0) {
      // The mobile node hands every routing agent a log target; this one logs nothing.
      return TCL_OK;
    }
    if (argc == 4 && std::strcmp(argv[1], "route") == 0) {
      // route DST NEXT_HOP: packets for node DST leave towards node NEXT_HOP.
      next_hop_[std::atoi(argv[2])] = std::atoi(argv[3]);
      return TCL_OK;
    }
    return Agent::command(argc, argv);
  }

  void recv(Packet* p, Handler*) override {
    hdr_ip* iph = HDR_IP(p);
    hdr_cmn* ch = HDR_CMN(p);
    const int src = Address::instance().get_nodeaddr(iph->saddr());
    const int dst = Address::instance().get_nodeaddr(iph->daddr());
    if (src == myaddr_ && ch->num_forwards() == 0) {
      // Originated here: the IP header, once (dsdv.cc :1010-1014, aodv.cc :577-583).
      const bool tcp = ch->ptype() == PT_TCP || ch->ptype() == PT_ACK;
      if (!tcp || tcp_ip_header_) ch->size() += IP_HDR_LEN;
      iph->ttl_ = IP_DEF_TTL;
    } else if (src == myaddr_) {
      drop(p, DROP_RTR_ROUTE_LOOP);
      return;
    } else if (--iph->ttl_ == 0) {
      drop(p, DROP_RTR_TTL);
      return;
    }
    if (static_cast<u_int32_t>(iph->daddr()) == IP_BROADCAST) {
      if (src == myaddr_) {
        ch->direction() = hdr_cmn::DOWN;
        ch->addr_type() = NS_AF_NONE;
        target_->recv(p, static_cast<Handler*>(0));
      } else if (port_dmux_ != 0) {
        port_dmux_->recv(p, static_cast<Handler*>(0));
      } else {
        drop(p, DROP_RTR_NO_ROUTE);
      }
      return;
    }
    std::map<int, int>::const_iterator hop = next_hop_.find(dst);
    if (hop == next_hop_.end()) {
      drop(p, DROP_RTR_NO_ROUTE);
      return;
    }
    ch->direction() = hdr_cmn::DOWN;
    ch->addr_type() = NS_AF_ILINK;
    ch->next_hop() = hop->second;
    ch->xmit_failure_ = 0;  // a frame that exhausts its retries is dropped by the MAC
    target_->recv(p, static_cast<Handler*>(0));
  }

 private:
  int myaddr_;
  NsObject* port_dmux_;
  int tcp_ip_header_;
  std::map<int, int> next_hop_;
};

class StaticRouteClass : public TclClass {
 public:
  StaticRouteClass() : TclClass("Agent/StaticRoute") {}
  TclObject* create(int, const char* const*) override { return new StaticRouteAgent(); }
} class_static_route;

// `$fill add ARPTABLE IP MAC`: ARPTABLE learns that node IP answers at MAC, as if
// an ARP reply had arrived (arpinput creates the entry and marks it up).
class ArpFill : public TclObject {
 public:
  int command(int argc, const char* const* argv) override {
    Tcl& tcl = Tcl::instance();
    if (argc == 5 && std::strcmp(argv[1], "add") == 0) {
      ARPTable* table = static_cast<ARPTable*>(TclObject::lookup(argv[2]));
      if (table == 0) {
        tcl.resultf("add: no ARP table %s", argv[2]);
        return TCL_ERROR;
      }
      Packet* p = Packet::alloc();
      hdr_arp* ah = HDR_ARP(p);
      ah->arp_op = ARPOP_REPLY;
      ah->arp_spa = std::atoi(argv[3]);
      ah->arp_sha = std::atoi(argv[4]);
      ah->arp_tpa = -1;
      table->arpinput(p, 0);  // frees p: a reply is not answered
      return TCL_OK;
    }
    return TclObject::command(argc, argv);
  }
};

class ArpFillClass : public TclClass {
 public:
  ArpFillClass() : TclClass("ARPFill") {}
  TclObject* create(int, const char* const*) override { return new ArpFill(); }
} class_arp_fill;

}  // namespace

// Tcl's `load FILE Staticroute` calls this; the classes above registered
// themselves with TclCL when the library's constructors ran.
extern "C" int Staticroute_Init(Tcl_Interp*) { return TCL_OK; }
