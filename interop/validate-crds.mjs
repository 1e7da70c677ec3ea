#!/usr/bin/env node
// Validates ServiceMonitor and PrometheusRule objects against the Prometheus Operator's CRD
// schemas, as npm's @kubernetes-models/prometheus-operator compiles them (the Kubernetes schemas
// of kubernetes-validate do not cover custom resources). scripts/test-deploy.sh runs it.
//
//   node validate-crds.mjs OBJECTS.json
//
// OBJECTS.json is a JSON array of objects (the test converts the rendered YAML). Objects of other
// kinds are an error: the caller picks the custom resources. Prints one line per object; exits 1
// when one does not validate.

import { readFileSync } from "node:fs";
import { PrometheusRule, ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";

const models = { PrometheusRule, ServiceMonitor };
const objects = JSON.parse(readFileSync(process.argv[2], "utf8"));
let failed = 0;
for (const object of objects) {
  const name = `${object.kind}/${object.metadata?.name}`;
  const Model = object.apiVersion === "monitoring.coreos.com/v1" ? models[object.kind] : undefined;
  if (!Model) {
    console.log(`${name}: not a monitoring.coreos.com/v1 ServiceMonitor or PrometheusRule`);
    failed++;
    continue;
  }
  try {
    new Model(object).validate();
    console.log(`${name}: valid`);
  } catch (error) {
    console.log(`${name}: ${error.message}`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
