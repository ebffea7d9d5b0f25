package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

const dbUsage = `
Usage: autotune db SUBCOMMAND [flags]

Inspects and maintains the tuning database: a bbolt file holding every
measurement of every tuning run (default $AUTOTUNE_DB, else autotune/tune.db
in the user cache directory).

Subcommands:
  ls       list the workloads with record counts and their best time
  show     show the records of one workload, fastest first
  export   write every record as JSON Lines (the portable, diffable form)
  import   add the records of JSON Lines files; records already present are skipped
  merge    add the records of other tuning databases
  prune    keep the records of the k best configs per workload, delete the rest
  check    list every damaged workload and record

Examples:
  autotune db ls
  autotune db show --op softmax --shape 4096x1024 --top 10
  autotune db export > records.jsonl
  autotune db import --db team.db records.jsonl
  autotune db merge --db team.db laptop.db
  autotune db prune --keep 5
  autotune db check
`

var dbCommand = command{
	name:    "db",
	summary: "inspect and maintain the tuning database (ls, show, export, import, merge, prune, check)",
	help:    dbUsage,
	run:     runDB,
}

func dbSubcommands() []command {
	return []command{
		{name: "ls", run: runDBList, help: `
Usage: autotune db ls [--db PATH] [--json]

Lists every workload in the tuning database with its record counts by
status and its best median time. TOOLCHAIN is what built its kernels (the
Go version for the CPU, NVRTC's for CUDA), "unknown" for records written
before records named it: records of two toolchains are two workloads.

Examples:
  autotune db ls
  autotune db ls --db team.db --json
`},
		{name: "show", run: runDBShow, help: `
Usage: autotune db show --op OP --shape SHAPE [--dtype DTYPE] [--device DEV] [--top N] [--db PATH] [--json]

Shows the records of one workload (every template version), successful
ones fastest first, then the failures.

Examples:
  autotune db show --op softmax --shape 4096x1024
  autotune db show --op gemm --shape 1024x1024x1024 --top 0 --json
`},
		{name: "export", run: runDBExport, help: `
Usage: autotune db export [--db PATH] [--out FILE] [--salvage]

Writes every record as JSON Lines, one record per line, workloads in key
order. Exporting, importing into an empty database and exporting again gives
the same bytes. The format is described in docs/database.md. A damaged
record makes the export fail; with --salvage it is left out instead, and
the number left out is said on stderr ('autotune db check' lists them).

Examples:
  autotune db export > records.jsonl
  autotune db export --db team.db --out team.jsonl
  autotune db export --db damaged.db --salvage | autotune db import --db new.db -
`},
		{name: "check", run: runDBCheck, help: `
Usage: autotune db check [--db PATH]

Reads every workload and record of the database and lists, one per line,
each one that is damaged (it does not decode, fails the checks every record
passes when stored, or is stored under another key), with its key. Exits 1
when there is any: 'autotune db export --salvage' then exports the rest.

Examples:
  autotune db check
  autotune db check --db team.db
`},
		{name: "import", run: runDBImport, help: `
Usage: autotune db import [--db PATH] FILE...

Adds the records of JSON Lines files (written by 'autotune db export'; "-"
reads standard input). A file is imported whole or not at all; records the
database already has are skipped, so importing twice changes nothing. Every
record is checked first: its statistics against its samples, its size, its
date (at most a day ahead), and, for the current template of its op, that
its config is in the template's knob space (see docs/database.md).

Examples:
  autotune db import records.jsonl
  autotune db export --db a.db | autotune db import --db b.db -
`},
		{name: "merge", run: runDBMerge, help: `
Usage: autotune db merge [--db PATH] OTHER.db...

Adds every record of other tuning databases; records already present are
skipped, and every record is checked as 'db import' checks it. The other
databases are only read.

Examples:
  autotune db merge --db team.db laptop.db workstation.db
`},
		{name: "prune", run: runDBPrune, help: `
Usage: autotune db prune --keep K [--db PATH]

For every workload, keeps all records of its K fastest configs and deletes
every other record, failures included: a later tuning run may measure the
deleted configs again. Export first if you want to keep them.

Examples:
  autotune db export > backup.jsonl && autotune db prune --keep 5
`},
	}
}

func runDB(_ *command, std *stdio, args []string) error {
	if len(args) == 0 {
		return usagef("missing subcommand (ls, show, export, import, merge, prune, check); see 'autotune db --help'")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(std.out, strings.TrimLeft(dbUsage, "\n"))
		return nil
	}
	for _, sub := range dbSubcommands() {
		if sub.name == args[0] {
			sub.name = "db " + sub.name
			return sub.run(&sub, std, args[1:])
		}
	}
	return usagef("unknown subcommand %q (ls, show, export, import, merge, prune, check); see 'autotune db --help'", args[0])
}

func dbFlag(fs *flag.FlagSet, path *string) {
	fs.StringVar(path, "db", "", "tuning database (default $AUTOTUNE_DB, else autotune/tune.db in the user cache directory)")
}

// How a command uses the database.
const (
	readDB   = iota // reads only: read-only and shared; the database must exist
	writeDB         // adds records (import, merge): created when missing
	changeDB        // changes what is there (prune): the database must exist
)

// openDB opens the tuning database at path, or the default one when path is
// empty. Commands that only read open it read-only and shared, so that they
// hold the lock only while they read and never keep a tuner from
// committing. Only commands that add records create a missing database: any
// other would leave an empty database at a mistyped path and report on it
// as if it were the real one.
func openDB(path string, mode int) (*tunedb.DB, error) {
	path, err := dbPath(path)
	if err != nil {
		return nil, err
	}
	switch mode {
	case readDB:
		return tunedb.Open(path, &tunedb.Options{ReadOnly: true, Shared: true})
	case changeDB:
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("tunedb: no database at %s", path)
		}
	}
	return tunedb.Open(path, &tunedb.Options{Check: newRecordCheck()})
}

// newRecordCheck returns the check of tunedb.Options.Check for imports and
// merges: a record of the current version of its op's template must be of a
// config of the template's space, for its shape and for the machine its
// device fingerprint describes. tunedb checks the rest of a record; it
// knows nothing of templates. Records of other template versions measured
// code this autotune cannot rebuild, and pass.
func newRecordCheck() func(tunedb.Record) error {
	spaces := map[string]*schedule.Space{} // by workload key
	return func(r tunedb.Record) (err error) {
		target, terr := device.FromFingerprint(r.Workload.Device)
		backend := kernels.BackendOf(target)
		if terr != nil && strings.HasPrefix(r.Workload.Device, "cuda/") {
			backend = kernels.CUDA // an architecture this autotune does not know
		}
		tmpl, ok := kernels.TemplateFor(r.Workload.Op, backend)
		if !ok || tmpl.Version != r.Workload.Template {
			return nil
		}
		if terr != nil {
			return terr
		}
		if target.CPU != nil {
			target.CPU.L1D, target.CPU.L2, target.CPU.L3 = unknownCache, unknownCache, unknownCache
		}
		key := r.Workload.Key()
		space, ok := spaces[key]
		if !ok {
			if space, err = recordSpace(tmpl, r.Workload, target); err != nil {
				return err
			}
			spaces[key] = space
		}
		c, err := space.Canonical(r.Config)
		if err != nil {
			return err
		}
		if c.String() != r.Config.String() {
			return fmt.Errorf("config %s is not in the knob order of %s's template (%s)", r.Config, r.Workload.Op, c)
		}
		if r.Status == tunedb.StatusInvalid {
			return nil // rejected by a constraint: it may violate one
		}
		return space.Check(c)
	}
}

// unknownCache is the size of each cache of a machine rebuilt from its
// fingerprint for the record check, which has no cache sizes: as large
// as any, so that constraints of a space that follow the caches (gemm's
// blocks and panels) accept what a machine could have measured. Without
// it the space's fallback (an L2 of 256 KiB, no L3) refused the records
// of a machine with larger caches, and db import refused the export of
// the same database.
const unknownCache = 1 << 40

// recordSpace returns the knob space of a workload's template on the
// machine of its device fingerprint.
func recordSpace(tmpl kernels.Template, w tunedb.Workload, target device.Target) (_ *schedule.Space, err error) {
	if _, err := tmpl.Op.ParseShape(kernels.FormatShape(w.Shape)); err != nil {
		return nil, err
	}
	defer func() {
		// A template trusts its shape and target; say which record broke it.
		if r := recover(); r != nil {
			err = fmt.Errorf("the knob space of %s %s on %s: %v", w.Op, w.ShapeString(), w.Device, r)
		}
	}()
	return tmpl.Space(w.Shape, target), nil
}

// tunerLockWait is how long a tuner waits for the database at each batch:
// readers hold it for milliseconds, another tuner for one commit.
const tunerLockWait = 30 * time.Second

// openForTuning opens the database the way a tuner uses it for minutes:
// shared, locked only during each operation, so that best, db ls and other
// tuners can use it between batches.
// What it has to say about waiting for the lock goes to log.
func openForTuning(path string, log io.Writer) (*tunedb.DB, error) {
	path, err := dbPath(path)
	if err != nil {
		return nil, err
	}
	return tunedb.Open(path, &tunedb.Options{Shared: true, Timeout: tunerLockWait,
		Log: func(msg string) { fmt.Fprintln(log, msg) }})
}

func dbPath(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	return tunedb.DefaultPath()
}

func runDBList(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var path string
	dbFlag(fs, &path)
	asJSON := fs.Bool("json", false, "print a JSON array of workload summaries")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	db, err := openDB(path, readDB)
	if err != nil {
		return err
	}
	defer db.Close()
	sums, err := db.Workloads()
	if err != nil {
		return err
	}
	if *asJSON {
		type summary struct {
			Workload tunedb.Workload       `json:"workload"`
			Records  int                   `json:"records"`
			ByStatus map[tunedb.Status]int `json:"by_status"`
			Best     *tunedb.Record        `json:"best"`
		}
		out := make([]summary, 0, len(sums))
		for _, s := range sums {
			out = append(out, summary{s.Workload, s.Records, s.ByStatus, s.Best})
		}
		return writeJSON(std, out)
	}
	if len(sums) == 0 {
		fmt.Fprintf(std.errs, "no workloads in %s\n", db.Path())
		return nil
	}
	tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OP\tSHAPE\tDTYPE\tDEVICE\tTEMPLATE\tTOOLCHAIN\tRECORDS\tOK\tFAILED\tBEST\tBEST CONFIG")
	for _, s := range sums {
		w := s.Workload
		best, cfg := "-", "-"
		if s.Best != nil {
			best, cfg = tunedb.FormatNS(s.Best.MedianNS), s.Best.Config.String()
		}
		ok := s.ByStatus[tunedb.StatusOK]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", w.Op, w.ShapeString(), w.DType, w.Device,
			shortHash(w.Template), toolchainName(w.Toolchain), s.Records, ok, s.Records-ok, best, cfg)
	}
	return tw.Flush()
}

func runDBShow(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var wf workloadFlags
	var path string
	wf.register(fs)
	dbFlag(fs, &path)
	top := fs.Int("top", 20, "show at most N records (0: all)")
	asJSON := fs.Bool("json", false, "print a JSON array of records")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *top < 0 {
		return usagef("--top must be 0 (all) or more, not %d", *top)
	}
	w, err := wf.resolve()
	if err != nil {
		return err
	}
	db, err := openDB(path, readDB)
	if err != nil {
		return err
	}
	defer db.Close()
	wls, err := db.Find(w.op.Name, w.shape, w.dtype, w.target.Fingerprint())
	if err != nil {
		return err
	}
	var recs []tunedb.Record
	for _, wl := range wls {
		rs, err := db.Records(wl)
		if err != nil {
			return err
		}
		recs = append(recs, rs...)
	}
	slices.SortStableFunc(recs, fasterFirst)
	if *top > 0 && len(recs) > *top {
		recs = recs[:*top]
	}
	if *asJSON {
		if recs == nil {
			recs = []tunedb.Record{}
		}
		return writeJSON(std, recs)
	}
	if len(recs) == 0 {
		return fmt.Errorf("no records for %s; run 'autotune db ls' to see what is there", describeWorkload(w))
	}
	tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tSTATUS\tMEDIAN\tP20\tP80\tTEMPLATE\tCONFIG\tERROR")
	for i, r := range recs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, r.Status, tunedb.FormatNS(r.MedianNS), tunedb.FormatNS(r.P20NS),
			tunedb.FormatNS(r.P80NS), shortHash(r.Workload.Template), r.Config, firstLine(r.Error, 60))
	}
	return tw.Flush()
}

// fasterFirst orders successful records by median time, then the others by status.
func fasterFirst(a, b tunedb.Record) int {
	aok, bok := a.Status == tunedb.StatusOK, b.Status == tunedb.StatusOK
	switch {
	case aok && bok:
		return cmp.Compare(a.MedianNS, b.MedianNS)
	case aok:
		return -1
	case bok:
		return 1
	}
	return strings.Compare(string(a.Status), string(b.Status))
}

func runDBExport(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var path string
	dbFlag(fs, &path)
	out := fs.String("out", "", "write to FILE instead of standard output")
	salvage := fs.Bool("salvage", false, "leave out damaged records instead of failing, and say how many on stderr")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	db, err := openDB(path, readDB)
	if err != nil {
		return err
	}
	defer db.Close()
	export := db.Export
	if *salvage {
		export = func(w io.Writer) error {
			skipped, err := db.ExportSalvage(w)
			if err == nil && len(skipped) > 0 {
				fmt.Fprintf(std.errs, "left out %d damaged records or workloads; 'autotune db check' lists them\n", len(skipped))
			}
			return err
		}
	}
	if *out == "" {
		return export(std.out)
	}
	return writeFile(*out, export)
}

func runDBCheck(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var path string
	dbFlag(fs, &path)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	db, err := openDB(path, readDB)
	if err != nil {
		return err
	}
	defer db.Close()
	damage, err := db.Check()
	if err != nil {
		return err
	}
	for _, d := range damage {
		fmt.Fprintln(std.out, d)
	}
	if len(damage) > 0 {
		return fmt.Errorf("%s: %d damaged records or workloads; 'autotune db export --salvage' exports the rest", db.Path(), len(damage))
	}
	fmt.Fprintf(std.errs, "%s: no damage found\n", db.Path())
	return nil
}

func runDBImport(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var path string
	dbFlag(fs, &path)
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usagef("no file to import; see 'autotune db import --help'")
	}
	db, err := openDB(path, writeDB)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, name := range files {
		st, err := importFile(db, name, std.in)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(std.out, "%s: imported %d records, %d already present%s\n", name, st.Added, st.Skipped, rangesStored(st))
	}
	return nil
}

// rangesStored says how many ranges an import or merge stored, if any.
func rangesStored(st tunedb.ImportStats) string {
	if st.Ranges == 0 {
		return ""
	}
	return fmt.Sprintf(", %d shape ranges stored", st.Ranges)
}

// importFile imports one JSON Lines file, or stdin for "-".
func importFile(db *tunedb.DB, name string, stdin io.Reader) (tunedb.ImportStats, error) {
	if name == "-" {
		return db.Import(stdin)
	}
	f, err := os.Open(name)
	if err != nil {
		return tunedb.ImportStats{}, err
	}
	defer f.Close()
	return db.Import(f)
}

func runDBMerge(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var path string
	dbFlag(fs, &path)
	others, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(others) == 0 {
		return usagef("no database to merge; see 'autotune db merge --help'")
	}
	db, err := openDB(path, writeDB)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, other := range others {
		st, err := db.Merge(other)
		if err != nil {
			return err
		}
		fmt.Fprintf(std.out, "%s: merged %d records, %d already present%s\n", other, st.Added, st.Skipped, rangesStored(st))
	}
	return nil
}

func runDBPrune(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var path string
	dbFlag(fs, &path)
	keep := fs.Int("keep", 0, "number of configs to keep per workload (required, at least 1)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *keep < 1 {
		return usagef("--keep K is required and must be at least 1; see 'autotune db prune --help'")
	}
	db, err := openDB(path, changeDB)
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := db.Prune(*keep)
	if err != nil {
		return err
	}
	fmt.Fprintf(std.out, "removed %d records, kept the %d best configs of each workload\n", n, *keep)
	return nil
}

// shortHash abbreviates a template version for tables, as git does commits.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// firstLine returns the first line of s, cut to at most n runes.
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, os.PathSeparator); i >= 0 {
		return path[:i+1]
	}
	return "."
}
