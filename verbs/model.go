package verbs

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/pkg/errors"
)

// Profile is a NIC cost model: it turns counters into a modelled fabric
// time, so runs on a machine without RDMA hardware can be projected onto
// one with it (DESIGN.md §3).
//
// The model: an endpoint (one QP set, one worker) spends Latency per
// dependent round trip plus its operations at IOPSPerQP plus its bytes at
// Bandwidth; a NIC (a CN's, summed over its endpoints, or an MN's, summed
// over every endpoint's operations to it) spends its operations at
// IOPSPerNIC plus its bytes at Bandwidth. Endpoints and NICs work in
// parallel, so the modelled time is the largest of these.
type Profile struct {
	Name       string        `json:"name"`
	Latency    time.Duration `json:"latency_ns"`   // per dependent round trip
	IOPSPerQP  float64       `json:"iops_per_qp"`  // operations/s one QP (one posting core) sustains
	IOPSPerNIC float64       `json:"iops_per_nic"` // operations/s one NIC sustains over all QPs
	Bandwidth  float64       `json:"bandwidth"`    // bytes/s per NIC per direction
}

// DefaultProfile models a 100 Gb/s RDMA NIC of the ConnectX-5/6 class:
//
//   - Latency 2 µs per dependent round trip: a small RDMA READ round trip
//     on ConnectX-3..5 class NICs measures about 1.6–2 µs (Kalia, Kaminsky,
//     Andersen, "Design Guidelines for High Performance RDMA Systems",
//     USENIX ATC 2016; Dragojević et al., "FaRM", NSDI 2014, report ≈2 µs
//     for small reads).
//   - 35 M operations/s per NIC: the small-READ/WRITE rate Kalia et al.
//     (ATC 2016, §3–4) measure on one ConnectX-4 NIC with many QPs; NVIDIA's
//     ConnectX-5/6 product briefs quote up to 200 M messages/s for tiny
//     sends, which one-sided READs do not reach.
//   - 10 M operations/s per QP: what one posting core achieves with doorbell
//     batching in the same study (verbs posting is CPU-bound per QP).
//   - 12.5 GB/s: the 100 Gb/s line rate (NVIDIA ConnectX-5 EN/VPI product
//     brief), before protocol overhead.
//
// These are round figures for projection, not a calibration of any one
// machine; override them with ParseProfile.
var DefaultProfile = Profile{
	Name:       "cx5-100g",
	Latency:    2 * time.Microsecond,
	IOPSPerQP:  10e6,
	IOPSPerNIC: 35e6,
	Bandwidth:  12.5e9,
}

// CXLProfile models a CXL memory pool behind a x16 link (the cxl backend
// on real hardware):
//
//   - Latency 300 ns per dependent access: Sun et al., "Demystifying CXL
//     Memory with Genuine CXL-Ready Systems and Devices" (MICRO 2023)
//     measure CXL memory load-to-use latencies of about 2–2.5× local DRAM
//     (roughly 250–400 ns on their devices); Li et al., "Pond: CXL-Based
//     Memory Pooling Systems for Cloud Platforms" (ASPLOS 2023) estimate
//     70–90 ns above local DRAM for a directly attached pool and more than
//     180 ns above it behind a switch.
//   - 64 GB/s per direction: a x16 link at PCIe 5.0 signalling (32 GT/s per
//     lane, CXL 2.0; a x8 link has half: lat=300ns,bw=32GB/s).
//   - 50 M operations/s per core (about 16 cache-line misses in flight at
//     300 ns) and 1 G/s per device (64 GB/s of 64-byte lines).
var CXLProfile = Profile{
	Name:       "cxl-x16",
	Latency:    300 * time.Nanosecond,
	IOPSPerQP:  50e6,
	IOPSPerNIC: 1e9,
	Bandwidth:  64e9,
}

// profiles are the named profiles ParseProfile knows.
func profiles() map[string]Profile {
	return map[string]Profile{DefaultProfile.Name: DefaultProfile, CXLProfile.Name: CXLProfile}
}

// Validate checks that every parameter is positive.
func (p Profile) Validate() error {
	if p.Latency < 0 || p.IOPSPerQP <= 0 || p.IOPSPerNIC <= 0 || p.Bandwidth <= 0 {
		return errors.Errorf("verbs: NIC profile %s needs lat >= 0 and positive qpiops, iops and bw", p)
	}
	return nil
}

func (p Profile) String() string {
	return fmt.Sprintf("%s: lat=%v,qpiops=%s,iops=%s,bw=%sB/s", p.Name, p.Latency,
		humanize.SIWithDigits(p.IOPSPerQP, 2, ""), humanize.SIWithDigits(p.IOPSPerNIC, 2, ""),
		humanize.SIWithDigits(p.Bandwidth, 2, ""))
}

// ParseProfile parses a --nic-profile value: a profile name ("" and
// "default" are DefaultProfile), and/or comma-separated overrides of the
// default (or of the named profile given first):
//
//	lat=1.5us     latency per round trip (a Go duration)
//	iops=100M     operations/s per NIC (SI suffixes)
//	qpiops=20M    operations/s per QP
//	bw=12.5GB/s   bandwidth per NIC (GB = 1e9, GiB = 2^30; "/s" optional)
func ParseProfile(s string) (Profile, error) {
	p := DefaultProfile
	s = strings.TrimSpace(s)
	if s == "" || s == "default" {
		return p, nil
	}
	custom := false
	for i, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		key, val, ok := strings.Cut(item, "=")
		if !ok {
			named, found := profiles()[item]
			if item == "default" {
				named, found = DefaultProfile, true
			}
			if !found || i != 0 {
				return p, errors.Errorf("verbs: NIC profile %q: unknown profile %q; expected %s, %s or key=value overrides (lat, iops, qpiops, bw)",
					s, item, DefaultProfile.Name, CXLProfile.Name)
			}
			p = named
			continue
		}
		custom = true
		var err error
		switch strings.ToLower(strings.TrimSpace(key)) {
		case "lat", "latency":
			p.Latency, err = time.ParseDuration(strings.TrimSpace(val))
		case "iops":
			p.IOPSPerNIC, err = parseSI(val)
		case "qpiops", "qp-iops":
			p.IOPSPerQP, err = parseSI(val)
		case "bw", "bandwidth":
			var b uint64
			b, err = humanize.ParseBytes(strings.TrimSuffix(strings.TrimSpace(val), "/s"))
			p.Bandwidth = float64(b)
		default:
			return p, errors.Errorf("verbs: NIC profile %q: unknown key %q; expected lat, iops, qpiops or bw", s, key)
		}
		if err != nil {
			return p, errors.Errorf("verbs: NIC profile %q: bad value for %s: %v", s, key, err)
		}
	}
	if custom {
		p.Name += "+custom"
	}
	return p, p.Validate()
}

func parseSI(s string) (float64, error) {
	v, unit, err := humanize.ParseSI(strings.TrimSuffix(strings.TrimSpace(s), "/s"))
	if err != nil {
		return 0, err
	}
	if unit != "" && unit != "ops" && unit != "op" {
		return 0, errors.Errorf("unexpected unit %q", unit)
	}
	return v, nil
}

// EndpointLoad is one endpoint's counts, for Profile.Time.
type EndpointLoad struct {
	CN    int        // the CN whose NIC the endpoint uses
	Total Counters   // Endpoint.Counters
	PerMN []Counters // Endpoint.CountersByMN
}

// EndpointTime is the modelled time of one endpoint (one QP set).
func (p Profile) EndpointTime(c Counters) float64 {
	return float64(c.RoundTrips)*p.Latency.Seconds() + float64(c.Ops())/p.IOPSPerQP + float64(c.Bytes())/p.Bandwidth
}

// NICTime is the modelled busy time of one NIC that handled c.
func (p Profile) NICTime(c Counters) float64 {
	return float64(c.Ops())/p.IOPSPerNIC + float64(c.Bytes())/p.Bandwidth
}

// ModelTime is a modelled fabric time and what bounds it.
type ModelTime struct {
	Seconds    float64 `json:"seconds"`
	Bottleneck string  `json:"bottleneck"` // "cn 0 endpoint 3", "cn 1 nic", "mn 2 nic"
}

// Time models the fabric time of a set of endpoints running in parallel:
// the slowest endpoint, CN NIC or MN NIC.
func (p Profile) Time(loads []EndpointLoad) ModelTime {
	var best ModelTime
	consider := func(t float64, what string) {
		if t > best.Seconds {
			best = ModelTime{Seconds: t, Bottleneck: what}
		}
	}
	cn := map[int]*Counters{}
	var mn []Counters
	for i, l := range loads {
		consider(p.EndpointTime(l.Total), fmt.Sprintf("cn %d endpoint %d", l.CN, i))
		if cn[l.CN] == nil {
			cn[l.CN] = &Counters{}
		}
		cn[l.CN].Add(l.Total)
		for m, c := range l.PerMN {
			for len(mn) <= m {
				mn = append(mn, Counters{})
			}
			mn[m].Add(c)
		}
	}
	for _, i := range slices.Sorted(maps.Keys(cn)) {
		consider(p.NICTime(*cn[i]), fmt.Sprintf("cn %d nic", i))
	}
	for m, c := range mn {
		consider(p.NICTime(c), fmt.Sprintf("mn %d nic", m))
	}
	return best
}
