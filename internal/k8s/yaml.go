package k8s

import (
	"fmt"
	"io"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

// WriteYAML writes the Job as a YAML document for `kubectl apply -f -`.
func WriteYAML(w io.Writer, job *batchv1.Job) error {
	b, err := yaml.Marshal(job)
	if err != nil {
		return fmt.Errorf("encode the Job as YAML: %w", err)
	}
	_, err = w.Write(b)
	return err
}
