package suite_test

import (
	"strings"
	"testing"

	"github.com/dmg-hpc/dmg/rank"
	"github.com/dmg-hpc/dmg/suite"
)

func TestValidate(t *testing.T) {
	base := func() suite.Suite {
		s := suite.Suite{Local: true}
		s.EnsureDefaults()
		return s
	}
	tests := []struct {
		name string
		edit func(*suite.Suite)
		ok   bool
	}{
		{"defaults", func(*suite.Suite) {}, true},
		{"empty flags of a variant", func(s *suite.Suite) { s.Variants = []string{"a=", "b=--batch 64"} }, true},
		{"variant without =", func(s *suite.Suite) { s.Variants = []string{"dmg"} }, false},
		{"variant name with a slash", func(s *suite.Suite) { s.Variants = []string{"a/b=--x"} }, false},
		{"variant twice", func(s *suite.Suite) { s.Variants = []string{"a=", "a=--batch 2"} }, false},
		{"several layouts in one item", func(s *suite.Suite) { s.Layouts = []string{"cn:1,mn:1,cn:2,mn:2"} }, true},
		{"layouts separated by ;", func(s *suite.Suite) { s.Layouts = []string{"cn:1,mn:1; cn:4,mn:2", "mn:1,cn:3"} }, true},
		{"half a layout", func(s *suite.Suite) { s.Layouts = []string{"cn:1,mn:1,cn:2"} }, false},
		{"bad layout", func(s *suite.Suite) { s.Layouts = []string{"cn:0,mn:1"} }, false},
		{"zero reps", func(s *suite.Suite) { s.Reps = -1 }, false},
		{"empty graph", func(s *suite.Suite) { s.Graphs = []string{""} }, false},
		{"no launcher", func(s *suite.Suite) { s.Local, s.Mpirun = false, " " }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base()
			tt.edit(&s)
			if err := s.Validate(); (err == nil) != tt.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// The default variants are the shared ones of those names, every one.
func TestDefaultVariantsShared(t *testing.T) {
	if _, err := rank.VariantsNamed(suite.DefaultVariantNames...); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(suite.DefaultVariants, ",") + 1; n != len(suite.DefaultVariantNames) {
		t.Errorf("DefaultVariants %q has %d variants; want %d", suite.DefaultVariants, n, len(suite.DefaultVariantNames))
	}
}
