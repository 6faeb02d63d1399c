// The topics and list filter of a webhook: the fields registration and editing share.
import { TOPICS, type Topic } from '../../topics';
import type { Subscription } from './api';
import { CheckBoxes } from './check-boxes';
import { errorOf } from './feedback';
import { TextField } from './text-field';

/** The list filter as typed: ids separated by commas, spaces or new lines. */
export const parseListIds = (text: string): string[] => text.split(/[\s,]+/).filter(Boolean);

export function SubscriptionFields({
  idPrefix,
  value,
  onChange,
  error,
}: {
  idPrefix: string;
  value: { events: Topic[]; listIds: string };
  onChange: (value: { events: Topic[]; listIds: string }) => void;
  error: unknown;
}) {
  return (
    <>
      <CheckBoxes
        id={`${idPrefix}-events`}
        legend="Topics"
        name="events"
        options={TOPICS}
        chosen={value.events}
        onChange={(events) => onChange({ ...value, events })}
        error={errorOf(error, 'events')}
      />
      <TextField
        id={`${idPrefix}-list-ids`}
        label="List filter"
        hint="List ids separated by commas; empty means all of the account's lists."
        name="listIds"
        value={value.listIds}
        onValue={(listIds) => onChange({ ...value, listIds })}
        error={errorOf(error, 'listIds')}
      />
    </>
  );
}

/** The form's value as the API takes it. */
export const toSubscription = (value: { events: Topic[]; listIds: string }): Subscription => ({
  events: value.events,
  listIds: parseListIds(value.listIds),
});
