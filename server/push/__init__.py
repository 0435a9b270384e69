"""Web Push (issue 54): the VAPID keys, a subscription checked, a message encrypted and sent."""
