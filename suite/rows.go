package suite

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/pkg/errors"

	"github.com/dmg-hpc/dmg/outfile"
)

// Row is one run of the matrix. Metrics are the report's numeric fields
// flattened to dotted keys ("times.compute_s", "verbs.atomics",
// "balance.tail_ratio"); arrays of numbers are summed, arrays of objects
// summed field by field ("iterations.active_edges") with a ".count". A
// field the report lacks is absent, never zero. Labels hold its strings.
type Row struct {
	Graph   string             `json:"graph"`
	Algo    string             `json:"algo"`
	Layout  string             `json:"layout"`
	CN      int                `json:"cn"`
	MN      int                `json:"mn"`
	Variant string             `json:"variant"`
	Flags   string             `json:"flags"`
	Rep     int                `json:"rep"`
	Status  string             `json:"status"`
	Error   string             `json:"error,omitempty"`
	WallS   float64            `json:"wall_s"`
	Labels  map[string]string  `json:"labels,omitempty"`
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// flattenReport turns a run's --json report into metrics and labels, and
// derives atomics_per_edge.
func flattenReport(b []byte) (map[string]float64, map[string]string, error) {
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, nil, errors.Wrap(err, "suite: decoding a run's --json report")
	}
	m, l := map[string]float64{}, map[string]string{}
	flatten("", v, m, l)
	if a, ok := m["verbs.atomics"]; ok {
		if e := m["iterations.active_edges"]; e > 0 {
			m[MetricAtomicsPerE] = a / e
		}
	}
	return m, l, nil
}

func flatten(key string, v any, m map[string]float64, l map[string]string) {
	join := func(k string) string {
		if key == "" {
			return k
		}
		return key + "." + k
	}
	switch x := v.(type) {
	case float64:
		m[key] = x
	case string:
		l[key] = x
	case bool:
		l[key] = strconv.FormatBool(x)
	case map[string]any:
		for k, e := range x {
			flatten(join(k), e, m, l)
		}
	case []any:
		// Numbers are summed; objects summed leaf by leaf, with a count.
		sub := map[string]float64{}
		objects := 0
		for _, e := range x {
			switch y := e.(type) {
			case float64:
				m[key] += y
			case map[string]any:
				objects++
				one := map[string]float64{}
				flatten("", y, one, map[string]string{})
				for k, n := range one {
					sub[k] += n
				}
			}
		}
		for k, n := range sub {
			m[join(k)] = n
		}
		if objects > 0 || len(x) == 0 {
			m[join("count")] = float64(objects)
		}
	}
}

// writeRows writes results.csv and results.json into dir atomically.
func writeRows(dir string, rows []Row) error {
	labels, metrics := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		for k := range r.Labels {
			labels[k] = true
		}
		for k := range r.Metrics {
			metrics[k] = true
		}
	}
	lk, mk := sortedKeys(labels), sortedKeys(metrics)
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	head := []string{"graph", "algo", "layout", "cn", "mn", "variant", "flags", "rep", "status", "error", "wall_s"}
	_ = w.Write(append(append(head, lk...), mk...))
	for _, r := range rows {
		rec := []string{r.Graph, r.Algo, r.Layout, strconv.Itoa(r.CN), strconv.Itoa(r.MN), r.Variant, r.Flags,
			strconv.Itoa(r.Rep), r.Status, r.Error, strconv.FormatFloat(r.WallS, 'g', 6, 64)}
		for _, k := range lk {
			rec = append(rec, r.Labels[k])
		}
		for _, k := range mk {
			s := ""
			if x, ok := r.Metrics[k]; ok {
				s = strconv.FormatFloat(x, 'g', -1, 64)
			}
			rec = append(rec, s)
		}
		_ = w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return errors.Wrap(err, "suite: encoding results.csv")
	}
	if err := outfile.WriteFile(filepath.Join(dir, "results.csv"), buf.Bytes()); err != nil {
		return err
	}
	return writeJSONFile(filepath.Join(dir, "results.json"), rows)
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return errors.Wrapf(err, "suite: encoding %s", path)
	}
	return outfile.WriteFile(path, append(b, '\n'))
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
