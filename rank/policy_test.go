package rank

import "testing"

// The iteration policy, decision by decision. The base is the design's
// mode on a directed graph of 1000 vertices and 10000 edges over two
// CNs, with the default thresholds (dense above |E|/20, pull above
// |E|/1.5, value pull above |E|/3).
func TestPolicyPlan(t *testing.T) {
	base := policy{
		pulls: true, remoteDense: viaMailboxes, remoteSparse: viaDirect,
		edges: 10000, vertices: 1000, hasIn: true, hasBits: true, hasMailbox: true, cns: 2,
		denseDivisor: 20, pullDivisor: 1.5, valuePullDivisor: 3,
	}
	with := func(f func(p *policy)) policy { p := base; f(&p); return p }
	pagerank := with(func(p *policy) { p.allActive = true })
	bfs := with(func(p *policy) { p.traversal = true })
	sssp := with(func(p *policy) { p.relaxes = true })
	cdlp := with(func(p *policy) { p.allActive, p.bag = true, true })
	for _, c := range []struct {
		name string
		p    policy
		f    facts
		want plan
	}{
		{"pagerank: dense, pulled over the in-edges, the rest by mailboxes", pagerank, facts{index: 4, activeV: 1000, activeE: 10000, valrdAt: "cn"},
			plan{index: 4, dense: true, pull: true, pullIn: true, remote: viaMailboxes, refrd: true, valrd: true, valrdAt: "cn"}},
		{"pagerank with the value pull: every candidate pulled", with(func(p *policy) { *p = pagerank; p.valuePull = true }), facts{activeV: 1000, activeE: 10000},
			plan{dense: true, pull: true, pullIn: true, vpull: true, remote: viaValues}},
		{"no value pull below |E|/3 active edges: pushed", with(func(p *policy) { *p = sssp; p.valuePull = true }), facts{activeV: 900, activeE: 3000, valrdAt: "mn"},
			plan{dense: true, remote: viaMailboxes, refrd: true, valrd: true, valrdAt: "mn"}},
		{"the value pull above |E|/3, relaxing", with(func(p *policy) { *p = sssp; p.valuePull = true }), facts{activeV: 900, activeE: 3400, valrdAt: "mn"},
			plan{dense: true, pull: true, pullIn: true, vpull: true, relax: true, remote: viaValues}},
		{"the remote pull, when asked, takes a busy dense pull", with(func(p *policy) { *p = pagerank; p.remotePull = true }), facts{activeV: 1000, activeE: 10000},
			plan{dense: true, pull: true, pullIn: true, rpull: true, remote: viaPull}},
		{"no remote pull for one CN", with(func(p *policy) { *p = pagerank; p.remotePull, p.cns = true, 1 }), facts{activeV: 1000, activeE: 10000, valrdAt: "cn"},
			plan{dense: true, pull: true, pullIn: true, remote: viaMailboxes, refrd: true, valrd: true, valrdAt: "cn"}},
		{"no remote pull for the multiset operator; its values applied on the CN", with(func(p *policy) { *p = cdlp; p.remotePull = true }), facts{activeV: 1000, activeE: 10000, valrdAt: "mn"},
			plan{dense: true, pull: true, pullIn: true, remote: viaMailboxes, refrd: true, valrd: true, valrdAt: "cn"}},
		{"bc's sweep back: dense for a frontier of three, pushed", with(func(p *policy) { p.everyVertex = true }), facts{activeV: 3, activeE: 40, valrdAt: "cn"},
			plan{dense: true, remote: viaMailboxes, refrd: true, valrd: true, valrdAt: "cn", skipIdle: true}},
		{"bfs sparse: pushed, direct, long segments by value", bfs, facts{activeV: 3, activeE: 40},
			plan{remote: viaDirect, sparseVal: true, sparseT: true, skipIdle: true}},
		{"bfs sparse, its values unread: candidates checked against the reached bitmaps", with(func(p *policy) { *p = bfs; p.reachedBits = true }), facts{activeV: 3, activeE: 40},
			plan{remote: viaDirect, sparseVal: true, sparseT: true, skipIdle: true, reached: true}},
		{"bfs sparse, fewer active edges than |V|/64: no bitmaps", with(func(p *policy) { *p = bfs; p.reachedBits = true }), facts{activeV: 3, activeE: 15},
			plan{remote: viaDirect, sparseVal: true, sparseT: true, skipIdle: true}},
		{"sssp sparse, its far words bounding the values: read again first", with(func(p *policy) { *p = sssp; p.boundsFar = true }), facts{activeV: 3, activeE: 40},
			plan{remote: viaDirect, sparseVal: true, sparseT: true, skipIdle: true, fresh: true}},
		{"sssp sparse, fewer active edges than |V|/64: the far words as they are", with(func(p *policy) { *p = sssp; p.boundsFar = true }), facts{activeV: 3, activeE: 15},
			plan{remote: viaDirect, sparseVal: true, sparseT: true, skipIdle: true}},
		{"bfs dense with its values unread: no bitmaps but the bottom-up's", with(func(p *policy) { *p = bfs; p.reachedBits = true }), facts{activeV: 300, activeE: 4000, hasTrav: true},
			plan{dense: true, pull: true, pullIn: true, bottomUp: true, remote: viaDirect}},
		{"bfs dense with its candidate known: bottom-up, nothing sent", bfs, facts{activeV: 300, activeE: 4000, hasTrav: true},
			plan{dense: true, pull: true, pullIn: true, bottomUp: true, remote: viaDirect}},
		{"bfs dense without bottom-up", with(func(p *policy) { *p = bfs; p.noBottomUp = true }), facts{activeV: 300, activeE: 4000, hasTrav: true, valrdAt: "cn"},
			plan{dense: true, pull: true, pullIn: true, remote: viaMailboxes, refrd: true, valrd: true, valrdAt: "cn"}},
		{"sssp dense but not busy: pushed; a few active vertices skip idle ones", sssp, facts{activeV: 100, activeE: 501, valrdAt: "cn"},
			plan{dense: true, remote: viaMailboxes, refrd: true, valrd: true, valrdAt: "cn", skipIdle: true}},
		{"sssp busy: pulled, relaxing", sssp, facts{activeV: 900, activeE: 7000, valrdAt: "cn"},
			plan{dense: true, pull: true, pullIn: true, relax: true, remote: viaMailboxes, refrd: true, valrd: true, valrdAt: "cn"}},
		{"sssp without relax", with(func(p *policy) { *p = sssp; p.noRelax = true }), facts{activeV: 900, activeE: 7000, valrdAt: "cn"},
			plan{dense: true, pull: true, pullIn: true, remote: viaMailboxes, refrd: true, valrd: true, valrdAt: "cn"}},
		{"a custom edge map: by value only, even with ValRD off", with(func(p *policy) { p.custom, p.pulls, p.noValRD = true, false, true }), facts{activeV: 900, activeE: 5000, valrdAt: "cn"},
			plan{dense: true, remote: viaMailboxes, valrd: true, valrdAt: "cn"}},
		{"an undirected graph pulls over its out-lists", with(func(p *policy) { *p = pagerank; p.hasIn = false }), facts{activeV: 1000, activeE: 10000, valrdAt: "cn"},
			plan{dense: true, pull: true, remote: viaMailboxes, refrd: true, valrd: true, valrdAt: "cn"}},
		{"naive: pushes every candidate, direct", with(func(p *policy) { *p = pagerank; p.pulls, p.remoteDense, p.hasMailbox = false, viaDirect, false }), facts{activeV: 1000, activeE: 10000},
			plan{dense: true, remote: viaDirect}},
		{"famgraph: every CN accumulates every vertex", with(func(p *policy) {
			*p = pagerank
			p.pulls, p.remoteDense, p.remoteSparse = false, viaLocalCopy, viaLocalCopy
		}), facts{activeV: 1000, activeE: 10000},
			plan{dense: true, remote: viaLocalCopy}},
		{"the triangle operator sends no sparse values", with(func(p *policy) { p.triangles = true }), facts{activeV: 10, activeE: 100},
			plan{remote: viaDirect, sparseT: true, skipIdle: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.p.plan(c.f); got != c.want {
				t.Errorf("plan(%+v)\n = %+v (%v)\nwant %+v (%v)", c.f, got, got, c.want, c.want)
			}
		})
	}
}

func TestPlanString(t *testing.T) {
	for _, c := range []struct {
		p    plan
		want string
	}{
		{plan{sparseT: true, sparseVal: true}, "sparse push sparse-valrd"},
		{plan{dense: true, pull: true, pullIn: true, bottomUp: true}, "dense pull in-edges bottom-up"},
		{plan{dense: true, refrd: true, valrd: true, valrdAt: "mn"}, "dense push refrd valrd@mn"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}
