-- The catalog: read by everyone, written rarely by admins.
CREATE TABLE programs (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  title       VARCHAR(200)    NOT NULL,
  career_tag  VARCHAR(50)     NOT NULL,
  type        ENUM('bootcamp', 'course', 'mentoring', 'workshop') NOT NULL,
  description VARCHAR(2000)   NOT NULL DEFAULT '',
  created_at  TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at  TIMESTAMP(3)    NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  KEY programs_tag_type (career_tag, type, id),
  KEY programs_type (type, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
