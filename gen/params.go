package gen

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Param is one model parameter, named model.Field as in [Config.Set].
type Param struct {
	Name  string // e.g. "zipf.HotProb"
	Value string // its value in the config it was listed from
}

// paramGroups maps a model name to its parameter struct in a Config.
func (c *Config) paramGroups() []struct {
	name string
	v    reflect.Value
} {
	return []struct {
		name string
		v    reflect.Value
	}{
		{"zipf", reflect.ValueOf(&c.Zipf).Elem()},
		{"scan", reflect.ValueOf(&c.Scan).Elem()},
		{"phases", reflect.ValueOf(&c.Phases).Elem()},
		{"churn", reflect.ValueOf(&c.Churn).Elem()},
		{"mix", reflect.ValueOf(&c.Mix).Elem()},
	}
}

// Params lists every model parameter of c with its value.
func (c *Config) Params() []Param {
	var out []Param
	for _, g := range c.paramGroups() {
		for i := range g.v.NumField() {
			out = append(out, Param{g.name + "." + g.v.Type().Field(i).Name, fmt.Sprint(g.v.Field(i).Interface())})
		}
	}
	return out
}

// Set sets the model parameter named model.Field (case-insensitive, e.g.
// "zipf.hotprob") to value. It does not validate the result; see
// [Config.Validate].
func (c *Config) Set(name, value string) error {
	model, field, ok := strings.Cut(name, ".")
	if !ok {
		return fmt.Errorf("gen: parameter %q is not of the form model.Field", name)
	}
	for _, g := range c.paramGroups() {
		if !strings.EqualFold(g.name, model) {
			continue
		}
		for i := range g.v.NumField() {
			if !strings.EqualFold(g.v.Type().Field(i).Name, field) {
				continue
			}
			f := g.v.Field(i)
			switch f.Kind() {
			case reflect.Float64:
				x, err := strconv.ParseFloat(value, 64)
				if err != nil {
					return fmt.Errorf("gen: parameter %s: %q is not a number", name, value)
				}
				f.SetFloat(x)
			case reflect.Int:
				x, err := strconv.Atoi(value)
				if err != nil {
					return fmt.Errorf("gen: parameter %s: %q is not an integer", name, value)
				}
				f.SetInt(int64(x))
			default:
				panic("gen: parameter of unexpected kind " + f.Kind().String())
			}
			return nil
		}
		return fmt.Errorf("gen: model %s has no parameter %q (see mdk gen --help)", g.name, field)
	}
	return fmt.Errorf("gen: unknown model %q in parameter %q", model, name)
}
