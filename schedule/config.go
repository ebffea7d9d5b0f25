package schedule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Config assigns a value to each of a list of knobs, in order. It is what the
// search proposes, what an emitter turns into code and what the tuning
// database stores. A Config does not refer to its Space, so records can be
// read back without the template that produced them; Space.Parse and
// Space.Check tie a Config to a space.
//
// The canonical text form is "vec=16,unroll=4,algo=online" (knob order), and
// the JSON form is an object with the same keys in the same order. Both
// round-trip exactly. The zero Config has no knobs; its text is "".
//
// Configs are immutable: no method changes the receiver, so they can be
// shared freely.
type Config struct {
	names []string
	vals  []Value
}

// NewConfig returns the config that assigns vals[i] to names[i]. It reports an
// error for invalid or repeated names, invalid values, or mismatched lengths.
func NewConfig(names []string, vals []Value) (Config, error) {
	if len(names) != len(vals) {
		return Config{}, fmt.Errorf("schedule: %d knob names for %d values", len(names), len(vals))
	}
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		if !ValidKnobName(n) {
			return Config{}, fmt.Errorf("schedule: invalid knob name %q", n)
		}
		if seen[n] {
			return Config{}, fmt.Errorf("schedule: knob %q given twice", n)
		}
		seen[n] = true
		if err := checkValue(vals[i]); err != nil {
			return Config{}, fmt.Errorf("schedule: knob %s: %w", n, err)
		}
	}
	return Config{names: slices.Clone(names), vals: slices.Clone(vals)}, nil
}

func checkValue(v Value) error {
	switch v.kind {
	case vInt, vBool:
		return nil
	case vString:
		if ValidEnumName(v.s) {
			return nil
		}
		return fmt.Errorf("invalid enum value %q", v.s)
	}
	return errors.New("invalid value")
}

// Len returns the number of knobs c assigns.
func (c Config) Len() int { return len(c.names) }

// Name returns the name of the i-th knob.
func (c Config) Name(i int) string { return c.names[i] }

// At returns the value of the i-th knob.
func (c Config) At(i int) Value { return c.vals[i] }

// Lookup returns the value of the named knob.
func (c Config) Lookup(name string) (Value, bool) {
	i := slices.Index(c.names, name)
	if i < 0 {
		return Value{}, false
	}
	return c.vals[i], true
}

// Get returns the value of the named knob and panics if c has no such knob:
// templates ask only for knobs their own space declares.
func (c Config) Get(name string) Value {
	v, ok := c.Lookup(name)
	if !ok {
		panic(fmt.Sprintf("schedule: config %q has no knob %q", c, name))
	}
	return v
}

// Int returns the named integer knob (see Get).
func (c Config) Int(name string) int { return c.Get(name).Int() }

// Str returns the named enum knob (see Get).
func (c Config) Str(name string) string { return c.Get(name).Str() }

// Bool returns the named boolean knob (see Get).
func (c Config) Bool(name string) bool { return c.Get(name).Bool() }

// Equal reports whether a and b assign the same values to the same knobs in
// the same order.
func (c Config) Equal(o Config) bool {
	return slices.Equal(c.names, o.names) && slices.Equal(c.vals, o.vals)
}

// String returns the canonical text form, e.g. "vec=16,unroll=4,algo=online".
func (c Config) String() string {
	var b strings.Builder
	for i, n := range c.names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(c.vals[i].String())
	}
	return b.String()
}

// ParseConfig reads the text form written by Config.String. Knobs keep the
// order of the text. Whitespace is not allowed, so that each config has
// exactly one text.
func ParseConfig(text string) (Config, error) {
	if text == "" {
		return Config{}, nil
	}
	parts := strings.Split(text, ",")
	names := make([]string, len(parts))
	vals := make([]Value, len(parts))
	for i, p := range parts {
		name, val, ok := strings.Cut(p, "=")
		if !ok {
			return Config{}, fmt.Errorf("schedule: config %q: %q is not knob=value", text, p)
		}
		v, err := ParseValue(val)
		if err != nil {
			return Config{}, fmt.Errorf("schedule: config %q: knob %s: invalid value %q", text, name, val)
		}
		names[i], vals[i] = name, v
	}
	c, err := NewConfig(names, vals)
	if err != nil {
		return Config{}, fmt.Errorf("schedule: config %q: %s", text, strings.TrimPrefix(err.Error(), "schedule: "))
	}
	return c, nil
}

// MarshalJSON writes an object with one member per knob, in knob order:
// integers as numbers, enums as strings, booleans as booleans.
func (c Config) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range c.names {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(n)
		b.Write(key)
		b.WriteByte(':')
		v := c.vals[i]
		if v.kind == vString {
			s, _ := json.Marshal(v.s)
			b.Write(s)
		} else {
			b.WriteString(v.String())
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the form written by MarshalJSON, keeping member order.
func (c *Config) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("schedule: config JSON must be an object")
	}
	var names []string
	var vals []Value
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("schedule: config JSON: %w", err)
		}
		name := tok.(string) // object keys are always strings
		tok, err = dec.Token()
		if err != nil {
			return fmt.Errorf("schedule: config JSON: knob %s: %w", name, err)
		}
		var v Value
		switch t := tok.(type) {
		case json.Number:
			v, err = ParseValue(t.String())
			if err != nil || v.kind != vInt {
				return fmt.Errorf("schedule: config JSON: knob %s: %s is not an integer", name, t)
			}
		case string:
			if !ValidEnumName(t) {
				return fmt.Errorf("schedule: config JSON: knob %s: invalid enum value %q", name, t)
			}
			v = StringValue(t)
		case bool:
			v = BoolValue(t)
		default:
			return fmt.Errorf("schedule: config JSON: knob %s: want a number, string or boolean", name)
		}
		names = append(names, name)
		vals = append(vals, v)
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("schedule: config JSON: %w", err)
	}
	if dec.More() {
		return errors.New("schedule: config JSON: trailing data")
	}
	cfg, err := NewConfig(names, vals)
	if err != nil {
		return err
	}
	*c = cfg
	return nil
}
