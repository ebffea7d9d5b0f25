package costmodel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"
)

func trained(t testing.TB, obj Objective) (*GBT, []Sample) {
	t.Helper()
	rows := landscape{noise: 0.05}.rows(rand.New(rand.NewPCG(2, 2)), 40)
	m := NewGBT(Options{Objective: obj, Trees: 30, Rand: rand.New(rand.NewPCG(2, 3))})
	if err := m.Fit(rows); err != nil {
		t.Fatal(err)
	}
	return m, rows
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, obj := range []Objective{Rank, Regression} {
		t.Run(obj.String(), func(t *testing.T) {
			m, rows := trained(t, obj)
			b, err := m.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%v: %d bytes", m, len(b))
			var loaded GBT
			if err := loaded.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			// Predictions are bit-identical, on training rows and new ones.
			feats := features(append(rows, landscape{}.rows(rand.New(rand.NewPCG(8, 8)), 20)...))
			if want, got := m.Predict(feats), loaded.Predict(feats); !slices.Equal(want, got) {
				t.Error("the loaded model predicts differently")
			}
			if loaded.NumFeatures() != m.NumFeatures() || loaded.String() != m.String() {
				t.Errorf("loaded %v, saved %v", &loaded, m)
			}
			b2, err := loaded.MarshalBinary()
			if err != nil || !bytes.Equal(b, b2) {
				t.Errorf("saving the loaded model gives other bytes (err %v)", err)
			}
		})
	}
}

func TestMarshalUntrained(t *testing.T) {
	if _, err := NewGBT(Options{}).MarshalBinary(); err == nil {
		t.Error("saving an untrained model succeeded")
	}
}

// withCRC appends the checksum to body, so that a test can reach the checks
// behind it.
func withCRC(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(slices.Clip(body), crc32.Checksum(body, castagnoli))
}

func TestUnmarshalCorrupt(t *testing.T) {
	m, _ := trained(t, Rank)
	good, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	body := good[:len(good)-4]
	edit := func(i int, b byte) []byte {
		c := slices.Clone(body)
		c[i] = b
		return withCRC(c)
	}
	cases := map[string][]byte{
		"empty":           nil,
		"magic only":      []byte(magic),
		"other magic":     append([]byte("XXXX"), good[4:]...),
		"version 2":       edit(4, 2),
		"objective 9":     edit(5, 9),
		"flipped bit":     func() []byte { c := slices.Clone(good); c[len(c)/2] ^= 4; return c }(),
		"bad checksum":    append(slices.Clone(body), 0, 0, 0, 0),
		"trailing byte":   withCRC(append(slices.Clone(body), 0)),
		"no trees":        withCRC(append(slices.Clone(body[:15]), 0)),
		"truncated body":  withCRC(body[:len(body)-3]),
		"truncated early": withCRC(body[:17]),
	}
	for n := 1; n < len(good); n += 1 + n/4 {
		cases[fmt.Sprintf("truncated to %d bytes", n)] = good[:n]
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			loaded := NewGBT(Options{})
			if err := loaded.Fit([]Sample{{Features: []float64{1}, Cost: 1}}); err != nil {
				t.Fatal(err)
			}
			if err := loaded.UnmarshalBinary(b); err == nil {
				t.Fatal("UnmarshalBinary succeeded")
			} else {
				t.Log(err)
			}
			if loaded.NumFeatures() != 1 {
				t.Error("a failed UnmarshalBinary changed the model")
			}
		})
	}
}

func FuzzUnmarshalBinary(f *testing.F) {
	// Small models: the fuzzer minimizes every new input it finds, which
	// takes long on a model of 100 trees.
	rows := landscape{noise: 0.05}.rows(rand.New(rand.NewPCG(4, 4)), 10)
	for _, obj := range []Objective{Rank, Regression} {
		m := NewGBT(Options{Objective: obj, Trees: 3, Depth: 3})
		if err := m.Fit(rows); err != nil {
			f.Fatal(err)
		}
		b, err := m.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)-4]) // for the parser: the fuzz body adds a checksum
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// As given, and with a valid checksum so that the parser behind it
		// sees the mutations.
		for _, d := range [][]byte{data, withCRC(data)} {
			var m GBT
			if m.UnmarshalBinary(d) != nil {
				continue
			}
			x := make([]float64, m.NumFeatures())
			for _, p := range m.Predict([][]float64{x}) {
				if p != p {
					t.Errorf("a loaded model predicts NaN")
				}
			}
		}
	})
}
