// The checkout page.

function readQuantity(form) {
  const value = form.elements.quantity.value;
  return parseInt(value.trim(), 10);
}

function submitOrder(form) {
  const qty = readQuantity(form);
  return fetch('/order', { method: 'POST', body: JSON.stringify({ qty }) });
}

module.exports = { readQuantity, submitOrder };
