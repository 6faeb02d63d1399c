// The Temporal server of a scenario, as the floor and the service use it.
import { descendants, type ProcessSampler } from './proc';
import { useTemporal, type TemporalServer } from './stack';
import { type Environment } from './types';

/** The scenario's Temporal server (see useTemporal), its command line noted in the environment. */
export async function scenarioTemporal(environment: Environment, scenarioDir: string): Promise<TemporalServer> {
  const temporal = await useTemporal(scenarioDir);
  environment.temporalServer = { cmdline: temporal.cmdline.join(' ') };
  return temporal;
}

/** Samples the server's processes (the CLI and its children) as the group `temporal`; returns the stop. */
export function sampleTemporal(sampler: ProcessSampler, temporal: TemporalServer): () => void {
  let temporalPids = temporal.pid ? descendants(temporal.pid) : [];
  const refreshTemporal = setInterval(() => (temporalPids = temporal.pid ? descendants(temporal.pid) : []), 2000);
  sampler.addGroup('temporal', () => temporalPids);
  return () => {
    clearInterval(refreshTemporal);
    sampler.removeGroup('temporal');
  };
}
