/** An identity-bound read action on the test's workspace API: the order number from the model, the user id from the verified identity, a secret token. */
export const orderStatus = (base: string) => ({
  name: 'order_status',
  description: 'Look up the status of an order by its order number.',
  method: 'GET',
  url: `${base}/users/{user_id}/orders/{order_number}`,
  headers: { Authorization: 'Bearer {api_token}' },
  parameters: [
    { name: 'order_number', source: 'model', schema: { type: 'string', pattern: '^[0-9]{3,10}$' }, required: true },
    { name: 'user_id', source: 'visitor', claim: 'user_id' },
    { name: 'api_token', source: 'secret' },
  ],
  response_fields: ['$.status', '$.items[*].name'],
  secrets: { api_token: 'tok_live_supersecret_9876' },
  enabled: true,
})
