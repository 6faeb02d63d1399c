// The Dockerfile as the deploy tests read it: its stages and their instructions. There is no
// Docker engine on our machines, so the tests check the file and run its steps themselves.

export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  from: string;
  alias?: string;
  instructions: Instruction[];
}

/** Instructions per stage, with line continuations joined and comments dropped. */
export function dockerfileStages(text: string): Stage[] {
  const lines = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, keyword, args] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    if (!keyword) throw new Error(`cannot read Dockerfile line: ${line}`);
    if (keyword.toUpperCase() === 'FROM') {
      const [, from, alias] = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args) ?? [];
      stages.push({ from: from, alias, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`Dockerfile instruction before FROM: ${line}`);
      stage.instructions.push({ keyword: keyword.toUpperCase(), args: args });
    }
  }
  return stages;
}

/** A stage's RUN instructions that install packages with npm. */
export function npmInstalls(stage: Stage): Instruction[] {
  return stage.instructions.filter((i) => i.keyword === 'RUN' && /\bnpm (ci|install|i)\b/.test(i.args));
}

/** The variables a stage's ENV instructions set (`ENV KEY=value …`, unquoted, or `ENV KEY value`). */
export function stageEnvironment(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of stage.instructions.filter((i) => i.keyword === 'ENV')) {
    if (!/^\S+=/.test(args)) {
      const [key, ...value] = args.split(/\s+/);
      env[key] = value.join(' ');
      continue;
    }
    for (const pair of args.split(/\s+/)) {
      const at = pair.indexOf('=');
      env[pair.slice(0, at)] = pair.slice(at + 1);
    }
  }
  return env;
}
