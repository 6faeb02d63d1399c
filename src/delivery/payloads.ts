// The exact bodies sent to receivers. Key order is part of the contract.

export function pingPayload(webhookId: string, at: Date = new Date()): string {
  return JSON.stringify({ event: 'ping', webhookId, at: at.toISOString() });
}
