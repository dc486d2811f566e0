package memfab_test

import (
	"fmt"
	"testing"

	"github.com/dmg-hpc/dmg/spmd"
	"github.com/dmg-hpc/dmg/verbs"
	"github.com/dmg-hpc/dmg/verbs/memfab"
)

// BenchmarkMemfab measures one endpoint's reads and FAAs per batch size.
func BenchmarkMemfab(b *testing.B) {
	for _, op := range []string{"read8", "read4k", "faa"} {
		for _, batch := range []int{1, 32} {
			b.Run(fmt.Sprintf("op=%s,batch=%d", op, batch), func(b *testing.B) {
				cluster := memfab.NewCluster()
				err := spmd.RunLocal(2, func(rt spmd.Runtime) error {
					w, err := spmd.NewWorld(rt, spmd.Roles{CN: 1, MN: 1})
					if err != nil {
						return err
					}
					net, err := memfab.Open(cluster, w, verbs.Config{PoolBytes: 1 << 20})
					if err != nil {
						return err
					}
					if w.Role == spmd.CN {
						ep, err := net.NewEndpoint()
						if err != nil {
							return err
						}
						at := ep.(verbs.Atomics)
						size := 8
						if op == "read4k" {
							size = 4096
						}
						buf := make([]byte, size*batch)
						b.SetBytes(int64(size * batch))
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							for k := range batch {
								a, _ := verbs.MakeAddr(0, uint64((i*batch+k)*size%(1<<20-4096)))
								if op == "faa" {
									err = at.FAA64(a&^7, 1, nil)
								} else {
									err = ep.Read(buf[k*size:(k+1)*size], a)
								}
								if err != nil {
									return err
								}
							}
							if err := ep.Flush(); err != nil {
								return err
							}
						}
						b.StopTimer()
					}
					return net.Close()
				})
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
