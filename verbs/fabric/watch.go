package fabric

import (
	"fmt"
	"time"
)

// stuckGrace is how long past Config.Timeout a Flush may stay inside the
// provider before the watch reports it: Flush's own deadline covers the
// waits for completions, not a provider call that never returns.
const stuckGrace = 5 * time.Second

// watch reports, once, a Flush of any endpoint that has been inside the
// provider for longer than the timeout plus stuckGrace (Config.Stuck). A
// provider call can spin for ever: libfabric 1.17's shm provider takes a
// spin lock in the target's shared region to queue an operation, and a
// process killed while it holds an MN's lock leaves it held for every
// later process. It stops with the network.
func (n *Network) watch(stop <-chan struct{}) {
	limit := n.cfg.Timeout + stuckGrace
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			n.mu.Lock()
			var since time.Duration
			for ep := range n.eps {
				if t := ep.busy.Load(); t != 0 {
					since = max(since, now.Sub(time.Unix(0, t)))
				}
			}
			n.mu.Unlock()
			if since > limit {
				n.cfg.Stuck(fmt.Sprintf("verbs: a %s operation has been inside the provider for %v, past the %v timeout: the provider is stuck (over shm: a live process holds an MN's queue lock and does not give it back, such as a job stopped with SIGSTOP; an MN takes it back from a dead one)",
					n.provider, since.Round(time.Second), n.cfg.Timeout))
				return
			}
		}
	}
}
