let url: string | undefined;

/** Where this test process's Temporal SDK exports its metrics (set by the setup file). */
export const sdkMetricsUrl = () => url;

export function setSdkMetricsUrl(value: string): void {
  url = value;
}
