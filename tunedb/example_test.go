package tunedb_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// A tuner commits each measured batch, then asks for the best config and
// for what it can skip when it runs again.
func Example() {
	dir, err := os.MkdirTemp("", "tunedb")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := tunedb.Open(filepath.Join(dir, "tune.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	w := tunedb.Workload{Op: "softmax", Shape: []int{4096, 1024}, DType: "f32", Device: "cpu/example/avx2/4c", Template: "3f2a9c1d"}
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	batch := []tunedb.Record{
		{Workload: w, Config: mustConfig("vec=8,unroll=2"), Status: tunedb.StatusOK, MedianNS: 520_000, Time: now},
		{Workload: w, Config: mustConfig("vec=16,unroll=4"), Status: tunedb.StatusOK, MedianNS: 410_000, Time: now},
		{Workload: w, Config: mustConfig("vec=32,unroll=4"), Status: tunedb.StatusBuildError, Error: "register spill", Time: now},
	}
	if err := db.Commit(batch); err != nil {
		log.Fatal(err)
	}

	best, ok, err := db.Best(w)
	if err != nil || !ok {
		log.Fatal(ok, err)
	}
	fmt.Printf("best: %s, %.0f µs\n", best.Config, best.MedianNS/1000)
	skip, err := db.Measured(w, false)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("skip vec=32,unroll=4:", skip["vec=32,unroll=4"])
	// Output:
	// best: vec=16,unroll=4, 410 µs
	// skip vec=32,unroll=4: true
}

func mustConfig(text string) schedule.Config {
	c, err := schedule.ParseConfig(text)
	if err != nil {
		panic(err)
	}
	return c
}
