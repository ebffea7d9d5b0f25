package tunedb

import (
	"bytes"
	"path/filepath"
	"testing"
)

func TestModels(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	k := ModelKey{Op: "softmax", Device: "cpu/x/avx2/2c", Template: "v1"}
	if _, ok, err := db.LoadModel(k); ok || err != nil {
		t.Fatalf("LoadModel on a fresh database = %v, %v", ok, err)
	}
	if err := db.SaveModel(k, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveModel(k, []byte("second")); err != nil {
		t.Fatal(err)
	}
	other := k
	other.Template = "v2"
	if err := db.SaveModel(other, []byte("other")); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveModel(ModelKey{Op: "softmax"}, []byte("x")); err == nil {
		t.Error("a key with empty fields was accepted")
	}
	var export bytes.Buffer
	if err := db.Export(&export); err != nil || export.Len() != 0 {
		t.Errorf("export of a database with only models wrote %q, %v", export.String(), err)
	}
	db.Close()

	db, err = Open(path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for key, want := range map[ModelKey]string{k: "second", other: "other"} {
		got, ok, err := db.LoadModel(key)
		if !ok || err != nil || string(got) != want {
			t.Errorf("LoadModel(%+v) = %q, %v, %v; want %q", key, got, ok, err, want)
		}
	}
}
