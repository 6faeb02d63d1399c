// One filter of a paged list (the delivery log, the audit log): the values the API accepts for
// it, and "Any" for none.
export function FilterSelect(props: {
  id: string;
  label: string;
  value: string | null | undefined;
  options: readonly string[];
  onChange: (value: string) => void;
}) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <select id={props.id} value={props.value ?? ''} onChange={(event) => props.onChange(event.currentTarget.value)}>
        <option value="">Any</option>
        {props.options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </div>
  );
}
