// Package kubernetes holds example manifests for running streamsub on
// Kubernetes behind Envoy Gateway (README.md, "Running replicas"). It has
// no code: its test decodes each manifest strictly into the upstream API
// types (k8s.io/api, Envoy Gateway's api/v1alpha1) and checks that they
// agree with each other and with streamsub's flags.
package kubernetes
