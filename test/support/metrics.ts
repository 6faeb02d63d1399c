/** The value of one sample line of the Prometheus text, 0 when absent. */
export function sample(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  const line = text.split('\n').find((candidate) => {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(candidate);
    return match?.[1] === name && wanted.every((pair) => (match[2] ?? '').split(',').includes(pair));
  });
  return line ? Number(line.split(' ').at(-1)) : 0;
}
