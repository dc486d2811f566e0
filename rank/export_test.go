package rank

// CkptFacts and Due expose the checkpoint cadence's decision to the
// table test (package rank_test).
type CkptFacts struct {
	Done, Last       int
	Final            bool
	Moved, CkptBytes uint64
	Spent, Cost      float64
}

func Due(c Cadence, f CkptFacts) bool {
	return c.due(ckptFacts{done: f.Done, last: f.Last, final: f.Final, moved: f.Moved, ckptBytes: f.CkptBytes, spent: f.Spent, cost: f.Cost})
}
