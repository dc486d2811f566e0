package rank

import (
	"github.com/pkg/errors"
)

// mnApply is the memory nodes' part of ValRD when they apply it: each MN
// folds the ValRD mailboxes it holds into the inbox words, in local memory.
func (e *engine) mnApply() error {
	if e.cn {
		return nil
	}
	pool := e.net.Pool()
	b := e.st.Out.Config.Bounds
	for k, m := range e.st.Out.ChunkMN {
		if m != e.w.Index {
			continue
		}
		applied, err := e.st.mb.ApplyValLocal(pool, k, b[k], b[k+1], e.st.InboxAddr(b[k]).Offset(), e.op)
		e.stats.updates.MNApplied += applied
		if err != nil {
			return errors.Wrapf(err, "rank: MN %d applying chunk %d's ValRD pairs", e.w.Index, k)
		}
	}
	return nil
}
