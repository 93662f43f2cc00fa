package load

import (
	"os"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/streamsub/streamsub/config"
	configv1 "github.com/streamsub/streamsub/proto/streamsub/config/v1"
)

// File reads, validates and compiles the configuration file at path. A
// file that cannot be read gives the *os.PathError; every problem in a
// rejected file is an *Error, several joined with errors.Join.
func File(path string) (*config.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parse(data, path)
}

// parse is File for a file's content; source names it in errors.
func parse(data []byte, source string) (*config.Config, error) {
	js, pos, err := yamlToJSON(data, (&configv1.Config{}).ProtoReflect().Descriptor(), source)
	if err != nil {
		return nil, err
	}
	var pb configv1.Config
	if err := (protojson.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(js, &pb); err != nil {
		return nil, &Error{Source: source, Err: err}
	}
	return build(&pb, source, pos)
}
