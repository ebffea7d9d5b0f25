package schedule

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestConfigTextRoundTrip(t *testing.T) {
	tests := []string{
		"",
		"vec=16",
		"vec=16,unroll=4,algo=online",
		"neg=-3,zero=0,fma=true,tails=false,exp=poly5",
		"name=a.b-c_d",
	}
	for _, text := range tests {
		t.Run(text, func(t *testing.T) {
			c, err := ParseConfig(text)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.String(); got != text {
				t.Errorf("String() = %q, want %q", got, text)
			}
			if c.Len() != strings.Count(text, "=") {
				t.Errorf("Len() = %d", c.Len())
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"vec", "not knob=value"},
		{"vec=", "invalid value"},
		{"vec=016", "invalid value"},
		{"vec=+3", "invalid value"},
		{"vec=1 ", "invalid value"},
		{"Vec=1", "invalid knob name"},
		{"=1", "invalid knob name"},
		{"vec=1,vec=2", "given twice"},
		{"vec=1,,b=2", "not knob=value"},
		{"vec=99999999999999999999", "invalid value"},
		{"algo=1abc", "invalid value"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			_, err := ParseConfig(tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseConfig(%q) error = %v, want containing %q", tt.text, err, tt.want)
			}
		})
	}
}

func TestConfigAccessors(t *testing.T) {
	c, err := ParseConfig("vec=16,algo=online,fma=true")
	if err != nil {
		t.Fatal(err)
	}
	if c.Int("vec") != 16 || c.Str("algo") != "online" || !c.Bool("fma") {
		t.Errorf("accessors read %d %q %v", c.Int("vec"), c.Str("algo"), c.Bool("fma"))
	}
	if _, ok := c.Lookup("nope"); ok {
		t.Error("Lookup found a knob that is not there")
	}
	mustPanic(t, "missing knob", func() { c.Int("nope") })
	mustPanic(t, "wrong type", func() { c.Str("vec") })
}

func TestConfigJSON(t *testing.T) {
	c, err := ParseConfig("vec=16,algo=online,fma=true,neg=-2")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"vec":16,"algo":"online","fma":true,"neg":-2}`
	if string(b) != want {
		t.Fatalf("Marshal = %s, want %s", b, want)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Equal(c) {
		t.Errorf("round trip gave %s, want %s", back, c)
	}
	// Inside a struct, as the database stores it.
	var rec struct {
		Config Config `json:"config"`
	}
	if err := json.Unmarshal([]byte(`{"config":{"b":1,"a":"x"}}`), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Config.String() != "b=1,a=x" {
		t.Errorf("nested config = %s, want member order kept", rec.Config)
	}
}

func TestConfigJSONErrors(t *testing.T) {
	for _, in := range []string{
		`[]`, `{"a":1.5}`, `{"a":null}`, `{"a":"16"}`, `{"a":"true"}`, `{"A":1}`,
		`{"a":1,"a":2}`, `{"a":[1]}`, `{"a":1e3}`,
	} {
		t.Run(in, func(t *testing.T) {
			var c Config
			if err := json.Unmarshal([]byte(in), &c); err == nil {
				t.Errorf("Unmarshal(%s) = %s, want an error", in, c)
			}
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{"", "vec=16,unroll=4,algo=online", "a=true,b=-1", "x=1,x=2", "=", ",", "a=b=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := ParseConfig(text)
		if err != nil {
			return
		}
		// Whatever parses is canonical: text → config → text is the identity,
		// and so is config → text → config and config → JSON → config.
		if c.String() != text {
			t.Fatalf("ParseConfig(%q).String() = %q", text, c.String())
		}
		again, err := ParseConfig(c.String())
		if err != nil || !again.Equal(c) {
			t.Fatalf("reparse of %q: %v, %v", text, again, err)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back Config
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(c) {
			t.Fatalf("JSON round trip of %q via %s: %v, %v", text, b, back, err)
		}
	})
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}
